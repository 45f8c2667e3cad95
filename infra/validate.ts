import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CodeServiceConfig } from '@hallmark/code-service';
import { GatewayConfig } from '@hallmark/gateway';
import { DistributedConfig } from '@hallmark/runtime';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { parseAllDocuments } from 'yaml';
import { AuctionServiceConfig } from '../services/auction-service/src/config.ts';
import { ComplianceServiceConfig } from '../services/compliance-service/src/config.ts';
import { VerifyServiceConfig } from '../services/verify-service/src/config.ts';
import { authorizationFile, authorizedNamespace } from './gen-nats-authorization.ts';
import { createUnknownFieldsCheck, type UnknownFields } from './kubernetes-fields.ts';
import { natsAuthorization, natsUsers, passwordVariableOf } from './nats-permissions.ts';

/** Where the image holds infra/postgres/roles.sql (infra/docker/Dockerfile), for the migration Job's --roles. */
const rolesFileInImage = '/app/infra/postgres/roles.sql';

// Docker cannot run here, so CI checks the deployment files against the code instead:
// they parse, carry the fields Kubernetes and Compose need, and name only images, services,
// commands and environment variables that exist.

const root = fileURLToPath(new URL('..', import.meta.url));
const services = ['gateway', 'code-service', 'verify-service', 'auction-service', 'compliance-service'];
const image = 'hallmark/hallmark:0.1.0';
const knownVariables = new Set(
  [
    DistributedConfig,
    GatewayConfig,
    CodeServiceConfig,
    VerifyServiceConfig,
    AuctionServiceConfig,
    ComplianceServiceConfig,
  ].flatMap((schema) => Object.keys(schema.properties)),
);
/** Who holds what (secrets.example.yaml): the master key seals signing keys; the S3 keys reach the photo bucket. */
const masterKeyServices = ['code-service', 'auction-service', 'compliance-service'];
const s3Variables = ['HALLMARK_S3_ACCESS_KEY_ID', 'HALLMARK_S3_SECRET_ACCESS_KEY'];
/** Secrets are created apart (secrets.example.yaml), never by `kubectl apply -k`, which would write the placeholders over real values. */
const isExample = (file: string) => file.endsWith('.example.yaml');
const autoscaled = ['gateway', 'verify-service'];
/** What every process of the distributed form needs: no default, not optional. */
const requiredNames = new Set<string>(DistributedConfig.required ?? []);
const requiredVariables = Object.entries(DistributedConfig.properties)
  .filter(([name, schema]) => requiredNames.has(name) && !('default' in schema))
  .map(([name]) => name);
/** Settings that are or carry secrets: in Kubernetes they belong in the Secret, never the ConfigMap. */
const secretVariables = [
  'HALLMARK_BUS_SECRET',
  'HALLMARK_MASTER_KEY',
  'HALLMARK_DATABASE_URL',
  'HALLMARK_NATS_URL',
  'HALLMARK_REDIS_URL',
  'HALLMARK_BOOTSTRAP_KEY',
  'HALLMARK_S3_SECRET_ACCESS_KEY',
];
/** NATS and Redis run with authorization, so their URLs carry credentials (`user:password@` or `:password@`). */
const carriesCredentials = (url: unknown) => /^[a-z]+:\/\/[^@/]*:[^@]+@[^@]+$/.test(String(url ?? ''));

// biome-ignore lint/suspicious/noExplicitAny: parsed YAML is untyped; every access below is checked.
type Doc = Record<string, any>;

/**
 * The Kubernetes API's JSON schemas, by apiVersion and kind, as the kubernetes-models package ships
 * them (nothing is fetched): wrong types, missing required fields and bad enum values fail. Its
 * schemas let unknown fields pass, so those are found from the package's type declarations
 * (kubernetes-fields.ts), as kubectl's strict field validation would refuse them.
 */
const kinds: Record<string, { model: new (data: never) => { validate(): void }; module: string }> = {
  'apps/v1 Deployment': { model: Deployment, module: 'kubernetes-models/apps/v1/Deployment' },
  'autoscaling/v2 HorizontalPodAutoscaler': {
    model: HorizontalPodAutoscaler,
    module: 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler',
  },
  'batch/v1 Job': { model: Job, module: 'kubernetes-models/batch/v1/Job' },
  'networking.k8s.io/v1 Ingress': { model: Ingress, module: 'kubernetes-models/networking.k8s.io/v1/Ingress' },
  'networking.k8s.io/v1 NetworkPolicy': { model: NetworkPolicy, module: 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy' },
  'policy/v1 PodDisruptionBudget': { model: PodDisruptionBudget, module: 'kubernetes-models/policy/v1/PodDisruptionBudget' },
  'v1 ConfigMap': { model: ConfigMap, module: 'kubernetes-models/v1/ConfigMap' },
  'v1 Namespace': { model: Namespace, module: 'kubernetes-models/v1/Namespace' },
  'v1 Secret': { model: Secret, module: 'kubernetes-models/v1/Secret' },
  'v1 Service': { model: Service, module: 'kubernetes-models/v1/Service' },
};

let unknownFields: UnknownFields | undefined;

function schemaProblems(doc: Doc): string[] {
  const kind = kinds[`${doc.apiVersion} ${doc.kind}`];
  if (!kind) return [`no schema for ${doc.apiVersion} ${doc.kind} (add the kind to infra/validate.ts)`];
  const problems: string[] = [];
  try {
    new kind.model(structuredClone(doc) as never).validate();
  } catch (error) {
    problems.push(`does not match the Kubernetes schema: ${error instanceof Error ? error.message : String(error)}`);
  }
  unknownFields ??= createUnknownFieldsCheck(
    Object.fromEntries(
      Object.entries(kinds).map(([name, { module }]) => [name, { module, interfaceName: `I${name.split(' ')[1]}` }]),
    ),
  );
  for (const path of unknownFields(doc)) problems.push(`unknown field ${path} (kubectl's strict field validation refuses it)`);
  return problems;
}

/** Whether a label selector (matchLabels, matchExpressions with In/NotIn/Exists) selects pods with these labels. */
function selects(selector: Doc | undefined, labels: Record<string, string>): boolean {
  if (!selector) return false;
  const matchLabels = Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
  const matchExpressions = (selector.matchExpressions ?? []).every((expression: Doc) => {
    const value = labels[expression.key];
    if (expression.operator === 'In') return value !== undefined && expression.values?.includes(value);
    if (expression.operator === 'NotIn') return value === undefined || !expression.values?.includes(value);
    if (expression.operator === 'Exists') return value !== undefined;
    return value === undefined;
  });
  return matchLabels && matchExpressions;
}

/** Ports the services may open connections to: DNS, NATS, PostgreSQL, Redis; HTTPS for the photo bucket. */
const allowedEgressPorts = new Set([53, 4222, 5432, 6379]);
const photoServices = ['gateway', 'auction-service'];
/** Out to the internet: the photo bucket (HTTPS) and tenants' webhook endpoints (HTTPS or HTTP). */
const internetPorts: Record<string, number[]> = {
  gateway: [443],
  'auction-service': [443],
  'compliance-service': [443, 80],
};

function documentsOf(file: string): Doc[] {
  // merge: Compose files share settings through YAML merge keys (<<).
  const documents = parseAllDocuments(readFileSync(file, 'utf8'), { merge: true });
  for (const document of documents) {
    if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]?.message}`);
  }
  return documents.map((document) => document.toJS() as Doc).filter(Boolean);
}

/** Production runs the build's output (dist/<x>.js, compiled from src/<x>.ts), never TypeScript through a loader. */
function checkCommand(where: string, workingDir: unknown, command: unknown, problems: string[]): void {
  const dir = String(workingDir ?? '').replace(/^\/app\//, '');
  const args = Array.isArray(command) ? command.map(String) : [];
  const entry = args.find((arg) => arg.endsWith('.js')) ?? args.at(-1) ?? '';
  const source = /^dist\/.+\.js$/.test(entry) ? entry.replace(/^dist\/(.+)\.js$/, 'src/$1.ts') : undefined;
  if (!dir || !source || !existsSync(join(root, dir, source))) {
    problems.push(
      `${where}: command ${JSON.stringify(command)} in ${workingDir} does not run a compiled file of this repository (dist/….js, built from src/….ts)`,
    );
  }
  if (!args.includes('--conditions=hallmark-compiled'))
    problems.push(`${where}: command must pass --conditions=hallmark-compiled, else @hallmark/* resolve to TypeScript sources`);
  if (args.some((arg) => arg.includes('tsx')))
    problems.push(`${where}: command runs a TypeScript loader; production runs pnpm build's output`);
}

/** Returns every problem found; an empty list means the files agree with the code. */
export function validateInfra(options: { k8sFolder?: string; composeFile?: string; dockerfile?: string } = {}): string[] {
  const problems: string[] = [];
  const k8sFolder = options.k8sFolder ?? join(root, 'infra/k8s');
  const composeFile = options.composeFile ?? join(root, 'docker-compose.yml');

  // Kubernetes
  const docs: Array<Doc & { file: string }> = [];
  const kustomization = documentsOf(join(k8sFolder, 'kustomization.yaml'))[0] ?? {};
  const listed = new Set<string>(kustomization.resources ?? []);
  for (const file of readdirSync(k8sFolder).filter((name) => name.endsWith('.yaml') && name !== 'kustomization.yaml')) {
    const documents = documentsOf(join(k8sFolder, file));
    if (isExample(file)) {
      if (listed.has(file)) problems.push(`kustomization.yaml lists ${file}: an example is not applied`);
    } else if (!listed.has(file)) problems.push(`infra/k8s/${file} is not listed in kustomization.yaml`);
    if (!isExample(file) && documents.some((doc) => doc.kind === 'Secret'))
      problems.push(
        `infra/k8s/${file} holds a Secret: \`kubectl apply -k\` would write its values over the real ones (put it in secrets.example.yaml)`,
      );
    for (const doc of documents) docs.push({ ...doc, file });
  }
  for (const file of listed) if (!existsSync(join(k8sFolder, file))) problems.push(`kustomization.yaml lists missing ${file}`);
  for (const doc of docs) {
    const where = `infra/k8s/${doc.file} ${doc.kind}/${doc.metadata?.name}`;
    if (!doc.apiVersion || !doc.kind || !doc.metadata?.name) problems.push(`${where}: needs apiVersion, kind and metadata.name`);
    const { file: _file, ...manifest } = doc;
    for (const problem of schemaProblems(manifest)) problems.push(`${where}: ${problem}`);
  }
  const configMap: Doc = Object.assign({}, ...docs.filter((doc) => doc.kind === 'ConfigMap').map((doc) => doc.data ?? {}));
  // Every Secret's settings (the database roles' and NATS users' Secrets are keyed by service, not by setting).
  const settingSecrets = docs.filter(
    (doc) => doc.kind === 'Secret' && !['hallmark-database-roles', 'hallmark-nats-users'].includes(doc.metadata?.name),
  );
  const secret: Doc = Object.assign({}, ...settingSecrets.map((doc) => doc.stringData ?? {}));
  /** The settings a container receives: its envFrom ConfigMaps' and Secrets' keys, and its env. */
  const settingsOf = (container: Doc | undefined): Set<string> => {
    const names = new Set<string>();
    for (const source of container?.envFrom ?? []) {
      const ref = source.configMapRef ?? source.secretRef;
      const kind = source.configMapRef ? 'ConfigMap' : 'Secret';
      const doc = docs.find((candidate) => candidate.kind === kind && candidate.metadata?.name === ref?.name);
      if (!doc) problems.push(`infra/k8s: ${kind} ${ref?.name} is referenced but defined nowhere`);
      for (const name of Object.keys(doc?.data ?? doc?.stringData ?? {})) names.add(name);
    }
    for (const variable of container?.env ?? []) names.add(variable.name);
    return names;
  };
  for (const name of [...Object.keys(configMap), ...Object.keys(secret)]) {
    if (!knownVariables.has(name)) problems.push(`infra/k8s: ${name} is not a setting the code reads`);
  }
  for (const required of requiredVariables) {
    // Each Deployment's own NATS user (checked with the Deployments, below).
    if (required === 'HALLMARK_NATS_URL') continue;
    if (!(required in configMap) && !(required in secret)) problems.push(`infra/k8s: ${required} is set nowhere`);
  }
  for (const name of secretVariables) {
    if (name in configMap) problems.push(`infra/k8s: ${name} holds a secret and belongs in the Secret, not the ConfigMap`);
  }
  for (const name of ['HALLMARK_NATS_URL', 'HALLMARK_REDIS_URL']) {
    if (name in secret && !carriesCredentials(secret[name]))
      problems.push(`infra/k8s: ${name} carries no credentials (NATS and Redis run with authorization)`);
  }
  for (const service of services) {
    const deployment = docs.find((doc) => doc.kind === 'Deployment' && doc.metadata?.name === service);
    if (!deployment) {
      problems.push(`infra/k8s: no Deployment for ${service}`);
      continue;
    }
    const where = `Deployment/${service}`;
    const container = deployment.spec?.template?.spec?.containers?.[0];
    const labels = deployment.spec?.template?.metadata?.labels ?? {};
    const selector = deployment.spec?.selector?.matchLabels ?? {};
    for (const [key, value] of Object.entries(selector)) {
      if (labels[key] !== value) problems.push(`${where}: selector ${key}=${value} does not match the pod labels`);
    }
    if (container?.image !== image) problems.push(`${where}: image should be ${image}`);
    checkCommand(where, container?.workingDir, container?.command, problems);
    for (const probe of ['livenessProbe', 'readinessProbe']) {
      const path = container?.[probe]?.httpGet?.path;
      if (path !== (probe === 'livenessProbe' ? '/health' : '/ready'))
        problems.push(`${where}: ${probe} must GET ${probe === 'livenessProbe' ? '/health' : '/ready'}`);
    }
    if (!container?.resources?.requests?.cpu || !container?.resources?.requests?.memory)
      problems.push(`${where}: needs resource requests`);
    for (const variable of container?.env ?? []) {
      if (!knownVariables.has(variable.name)) problems.push(`${where}: env ${variable.name} is not a setting the code reads`);
    }
    const settings = settingsOf(container);
    for (const required of requiredVariables) {
      if (!settings.has(required)) problems.push(`${where}: ${required} does not reach its pods`);
    }
    const needsMasterKey = masterKeyServices.includes(service);
    if (settings.has('HALLMARK_MASTER_KEY') !== needsMasterKey)
      problems.push(
        needsMasterKey
          ? `${where}: HALLMARK_MASTER_KEY does not reach its pods`
          : `${where}: HALLMARK_MASTER_KEY reaches its pods; only ${masterKeyServices.join(', ')} may hold it`,
      );
    for (const name of ['HALLMARK_S3_BUCKET_URL', ...s3Variables]) {
      if (settings.has(name) && !photoServices.includes(service))
        problems.push(`${where}: ${name} reaches its pods; only ${photoServices.join(', ')} use the photo bucket`);
    }
    // A service given the bucket's URL without its keys refuses to start (blobStoreFor).
    if (settings.has('HALLMARK_S3_BUCKET_URL') && !s3Variables.every((name) => settings.has(name)))
      problems.push(`${where}: HALLMARK_S3_BUCKET_URL reaches its pods without ${s3Variables.join(' and ')}`);
    if (deployment.spec?.replicas !== undefined)
      problems.push(
        autoscaled.includes(service)
          ? `${where}: sets replicas, which every apply would reset under its HorizontalPodAutoscaler`
          : `${where}: sets replicas, which every apply would reset after a kubectl scale`,
      );
    const portNames = new Set((container?.ports ?? []).map((port: Doc) => port.name));
    if (!portNames.has(container?.readinessProbe?.httpGet?.port))
      problems.push(`${where}: the readiness probe's port is not declared`);
    // Outside the gateway's request queue: behind it, a load spike failed every replica's readiness at once.
    if (container?.readinessProbe?.httpGet?.port !== 'probes')
      problems.push(`${where}: the readiness probe must use the probes port (HALLMARK_PROBE_PORT)`);
    // A first start may wait on the migrations' lock while the Job builds an index (30 minutes).
    const startup = container?.startupProbe ?? {};
    if ((startup.periodSeconds ?? 10) * (startup.failureThreshold ?? 3) < 1_800)
      problems.push(`${where}: the startup probe must allow 30 minutes (the migrations' lock)`);
    const serviceDoc = docs.find((doc) => doc.kind === 'Service' && doc.metadata?.name === service);
    if (!serviceDoc) problems.push(`infra/k8s: no Service for ${service}`);
    else if (serviceDoc.spec?.selector?.['app.kubernetes.io/name'] !== service)
      problems.push(`Service/${service}: selector does not select its pods`);
    checkPodSecurity(where, deployment.spec?.template?.spec ?? {}, problems);
    checkSpread(where, deployment.spec?.template?.spec?.topologySpreadConstraints ?? [], selector, problems);
    // Each service on its own PostgreSQL role (infra/postgres/roles.sql), never the owner's URL.
    const databaseUrl = (container?.env ?? []).find((variable: Doc) => variable.name === 'HALLMARK_DATABASE_URL');
    const roleRef = databaseUrl?.valueFrom?.secretKeyRef;
    if (roleRef?.name !== 'hallmark-database-roles' || roleRef.key !== service)
      problems.push(
        `${where}: HALLMARK_DATABASE_URL must come from its own role's entry (secretKeyRef key ${service}), not the owner's URL`,
      );
    else {
      const url = docs.find((doc) => doc.kind === 'Secret' && doc.metadata?.name === roleRef.name)?.stringData?.[service];
      const user = URL.canParse(String(url)) ? new URL(String(url)).username : undefined;
      const expected = `hallmark_${service.replaceAll('-', '_')}`;
      if (user !== expected)
        problems.push(`Secret/${roleRef.name}: ${service} must connect as ${expected} (infra/postgres/roles.sql), not ${user}`);
    }
    // Each service on its own NATS user (infra/nats/authorization.conf), allowed only its subjects.
    const natsUrl = (container?.env ?? []).find((variable: Doc) => variable.name === 'HALLMARK_NATS_URL');
    const natsRef = natsUrl?.valueFrom?.secretKeyRef;
    if (natsRef?.name !== 'hallmark-nats-users' || natsRef.key !== service)
      problems.push(`${where}: HALLMARK_NATS_URL must come from its own NATS user's entry (hallmark-nats-users, key ${service})`);
    else {
      const url = docs.find((doc) => doc.kind === 'Secret' && doc.metadata?.name === natsRef.name)?.stringData?.[service];
      checkNatsUser(`Secret/${natsRef.name}`, service, url, problems);
    }
    const budget = docs.find((doc) => doc.kind === 'PodDisruptionBudget' && selects(doc.spec?.selector, labels));
    if (!budget) problems.push(`${where}: no PodDisruptionBudget selects its pods`);
    else if (budget.spec?.minAvailable === undefined && budget.spec?.maxUnavailable === undefined)
      problems.push(`PodDisruptionBudget/${budget.metadata?.name}: needs minAvailable or maxUnavailable`);
    checkNetworkPolicies(where, service, labels, docs, problems);
  }
  checkIngress(docs, configMap, problems);
  const migrate = docs.find((doc) => doc.kind === 'Job' && doc.metadata?.name === 'hallmark-migrate');
  if (!migrate) problems.push("infra/k8s: no Job hallmark-migrate (the services' roles cannot apply migrations)");
  else {
    const pod = migrate.spec?.template?.spec ?? {};
    const container = pod.containers?.[0];
    checkPodSecurity('Job/hallmark-migrate', pod, problems);
    checkCommand('Job/hallmark-migrate', container?.workingDir, container?.command, problems);
    // The migrations, then the roles' grants (a table a release adds is granted in the same step).
    if (container?.command?.slice(-3).join(' ') !== `migrate --roles ${rolesFileInImage}`) {
      problems.push(`Job/hallmark-migrate: must run hallmark migrate --roles ${rolesFileInImage}`);
    }
    if (container?.image !== image) problems.push(`Job/hallmark-migrate: image should be ${image}`);
    // The owner's URL and nothing else: the Job holds no key, secret or other credential.
    const jobSettings = [...settingsOf(container)];
    if (jobSettings.join() !== 'HALLMARK_DATABASE_URL')
      problems.push(`Job/hallmark-migrate: should receive HALLMARK_DATABASE_URL only, not ${jobSettings.join(', ')}`);
  }
  for (const target of autoscaled) {
    const hpa = docs.find((doc) => doc.kind === 'HorizontalPodAutoscaler' && doc.spec?.scaleTargetRef?.name === target);
    if (!hpa) problems.push(`infra/k8s: no HorizontalPodAutoscaler for ${target}`);
  }

  // Compose
  const compose = documentsOf(composeFile)[0] ?? {};
  for (const dependency of ['nats', 'postgres', 'redis']) {
    if (!compose.services?.[dependency]?.healthcheck) problems.push(`docker-compose.yml: ${dependency} needs a healthcheck`);
  }
  const natsCommand: string[] = (compose.services?.nats?.command ?? []).map(String);
  if (!natsCommand.includes('-js')) problems.push('docker-compose.yml: nats must run with -js');
  const natsConfig = natsCommand[natsCommand.indexOf('-c') + 1];
  const natsVolumes: string[] = (compose.services?.nats?.volumes ?? []).map(String);
  if (!natsCommand.includes('-c') || !natsVolumes.includes(`./infra/nats/authorization.conf:${natsConfig}:ro`))
    problems.push('docker-compose.yml: nats must run with its users (-c, infra/nats/authorization.conf mounted read-only)');
  for (const user of natsUsers) {
    const variable = passwordVariableOf(user);
    if (!(variable in (compose.services?.nats?.environment ?? {})))
      problems.push(`docker-compose.yml nats: ${variable} is not set (authorization.conf reads it)`);
  }
  checkNatsAuthorizationFile(
    [compose.services?.gateway?.environment?.HALLMARK_NAMESPACE, configMap.HALLMARK_NAMESPACE],
    problems,
  );
  const redisCommand: string[] = (compose.services?.redis?.command ?? []).map(String);
  if (!redisCommand.includes('--requirepass')) problems.push('docker-compose.yml: redis must run with --requirepass');
  // Scan totals and quotas live there: lost on a restart, a clone's scans would count from 1 again.
  const redisOption = (name: string) => redisCommand[redisCommand.indexOf(name) + 1];
  if (!redisCommand.includes('--appendonly') || redisOption('--appendonly') !== 'yes')
    problems.push('docker-compose.yml: redis must run with --appendonly yes');
  if (!redisCommand.includes('--maxmemory-policy') || redisOption('--maxmemory-policy') !== 'noeviction')
    problems.push('docker-compose.yml: redis must run with --maxmemory-policy noeviction');
  if (!(compose.services?.redis?.volumes ?? []).map(String).some((volume: string) => volume.endsWith(':/data')))
    problems.push('docker-compose.yml: redis must keep /data on a volume');
  for (const service of services) {
    const entry = compose.services?.[service];
    const where = `docker-compose.yml ${service}`;
    if (!entry) {
      problems.push(`${where}: missing`);
      continue;
    }
    if (entry.image !== image) problems.push(`${where}: image should be ${image}`);
    if (!entry.healthcheck) problems.push(`${where}: needs a healthcheck`);
    checkCommand(where, entry.working_dir, entry.command, problems);
    for (const name of Object.keys(entry.environment ?? {})) {
      if (!knownVariables.has(name)) problems.push(`${where}: ${name} is not a setting the code reads`);
    }
    for (const required of requiredVariables) {
      if (!(required in (entry.environment ?? {}))) problems.push(`${where}: ${required} is not set`);
    }
    if ('HALLMARK_MASTER_KEY' in (entry.environment ?? {}) !== masterKeyServices.includes(service))
      problems.push(
        masterKeyServices.includes(service)
          ? `${where}: HALLMARK_MASTER_KEY is not set`
          : `${where}: HALLMARK_MASTER_KEY is set; only ${masterKeyServices.join(', ')} may hold it`,
      );
    if (entry.stop_grace_period === undefined)
      problems.push(
        `${where}: needs a stop_grace_period longer than HALLMARK_SHUTDOWN_TIMEOUT_MS (Docker's 10 s default cuts the drain)`,
      );
    for (const name of ['HALLMARK_NATS_URL', 'HALLMARK_REDIS_URL']) {
      if (name in (entry.environment ?? {}) && !carriesCredentials(entry.environment[name]))
        problems.push(`${where}: ${name} carries no credentials (NATS and Redis run with authorization)`);
    }
    checkNatsUser(where, service, entry.environment?.HALLMARK_NATS_URL, problems);
    for (const dependency of ['nats', 'postgres', 'redis']) {
      if (entry.depends_on?.[dependency]?.condition !== 'service_healthy')
        problems.push(`${where}: should wait for ${dependency} to be healthy`);
    }
  }
  const dockerfile = compose.services?.gateway?.build?.dockerfile;
  if (!dockerfile || !existsSync(join(root, dockerfile)))
    problems.push(`docker-compose.yml: build.dockerfile ${dockerfile} does not exist`);
  else checkDockerfile(options.dockerfile ?? join(root, dockerfile), problems);
  return problems;
}

/** Every container: a fixed non-root uid, no privilege escalation, no capabilities, RuntimeDefault seccomp, a read-only root with /tmp an emptyDir. */
/** Replicas spread over nodes and over zones, each constraint selecting the Deployment's own pods. */
function checkSpread(where: string, constraints: Doc[], selector: Record<string, unknown>, problems: string[]): void {
  for (const topologyKey of ['kubernetes.io/hostname', 'topology.kubernetes.io/zone']) {
    const constraint = constraints.find((candidate) => candidate.topologyKey === topologyKey);
    const selects = (labels: Record<string, unknown> | undefined) =>
      labels !== undefined &&
      Object.keys(selector).length > 0 &&
      Object.entries(selector).every(([key, value]) => labels[key] === value);
    if (!constraint || !selects(constraint.labelSelector?.matchLabels))
      problems.push(`${where}: no topologySpreadConstraints over ${topologyKey} selecting its own pods`);
  }
}

function checkPodSecurity(where: string, pod: Doc, problems: string[]): void {
  if (pod.automountServiceAccountToken !== false) problems.push(`${where}: automountServiceAccountToken must be false`);
  const emptyDirs = new Set((pod.volumes ?? []).filter((volume: Doc) => volume.emptyDir).map((volume: Doc) => volume.name));
  for (const container of pod.containers ?? []) {
    const own: Doc = container.securityContext ?? {};
    const effective: Doc = { ...(pod.securityContext ?? {}), ...own };
    const at = `${where} container ${container.name}`;
    if (effective.runAsNonRoot !== true) problems.push(`${at}: runAsNonRoot must be true`);
    if (!Number.isInteger(effective.runAsUser) || effective.runAsUser <= 0)
      problems.push(`${at}: runAsUser must be a fixed non-root uid`);
    if (effective.seccompProfile?.type !== 'RuntimeDefault') problems.push(`${at}: seccompProfile must be RuntimeDefault`);
    if (own.allowPrivilegeEscalation !== false) problems.push(`${at}: allowPrivilegeEscalation must be false`);
    if (own.readOnlyRootFilesystem !== true) problems.push(`${at}: readOnlyRootFilesystem must be true`);
    if (!(own.capabilities?.drop ?? []).includes('ALL')) problems.push(`${at}: capabilities must drop ALL`);
    const tmp = (container.volumeMounts ?? []).find((mount: Doc) => mount.mountPath === '/tmp');
    if (!tmp || !emptyDirs.has(tmp.name)) problems.push(`${at}: /tmp must be an emptyDir (the root filesystem is read-only)`);
  }
}

/**
 * NetworkPolicies: everything denied by default, DNS allowed, traffic in only to the gateway, and
 * out only to DNS, NATS, PostgreSQL and Redis (plus HTTPS for the photo bucket from the gateway and
 * auction-service, and HTTPS or HTTP for tenants' webhook endpoints from compliance-service).
 */
function checkNetworkPolicies(
  where: string,
  service: string,
  labels: Record<string, string>,
  docs: Doc[],
  problems: string[],
): void {
  // Policies of the pods' own namespace only (stores-access.example.yaml guards the stores' namespace).
  const policies = docs.filter(
    (doc) =>
      doc.kind === 'NetworkPolicy' &&
      (doc.metadata?.namespace ?? 'hallmark') === 'hallmark' &&
      selects(doc.spec?.podSelector, labels),
  );
  const types = (policy: Doc) => (policy.spec?.policyTypes ?? []) as string[];
  if (
    !policies.some(
      (policy) =>
        types(policy).includes('Ingress') && types(policy).includes('Egress') && !policy.spec?.ingress && !policy.spec?.egress,
    )
  )
    problems.push(`${where}: no default-deny NetworkPolicy (policyTypes Ingress and Egress, no rules) selects its pods`);
  const egress: Doc[] = policies.flatMap((policy) => policy.spec?.egress ?? []);
  if (!egress.some((rule) => (rule.ports ?? []).some((port: Doc) => port.port === 53 && (port.protocol ?? 'TCP') === 'UDP')))
    problems.push(`${where}: no NetworkPolicy lets its pods reach DNS (UDP 53)`);
  const allowed = new Set([...allowedEgressPorts, ...(internetPorts[service] ?? [])]);
  for (const rule of egress) {
    const ports = (rule.ports ?? []) as Doc[];
    if (ports.length === 0 || ports.some((port) => !allowed.has(port.port)))
      problems.push(
        `${where}: a NetworkPolicy lets its pods reach ports ${ports.length === 0 ? 'all' : ports.map((port) => port.port).join(', ')}; allowed: ${[...allowed].join(', ')}`,
      );
  }
  for (const rule of egress)
    for (const peer of (rule.to ?? []) as Doc[]) if (peer.ipBlock) checkIpBlock(where, peer.ipBlock, problems);
  const ingress: Doc[] = policies.flatMap((policy) => policy.spec?.ingress ?? []);
  if (service !== 'gateway' && ingress.length > 0)
    problems.push(`${where}: a NetworkPolicy admits traffic to its pods; only the gateway takes any`);
}

/** Addresses no egress rule may reach: private, carrier-grade NAT, the metadata address, unique- and link-local. */
const closedAddresses = ['10.1.2.3', '100.64.1.2', '172.16.1.2', '192.168.1.2', '169.254.169.254', 'fd00::1', 'fe80::1'];

/** `address/prefix` parsed, or undefined when it is not a CIDR the API server takes. */
function parseCidr(cidr: unknown): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  if (typeof cidr !== 'string') return undefined;
  const [address = '', prefixText = ''] = cidr.split('/');
  const version = isIP(address);
  const prefix = Number(prefixText);
  if (version === 0 || !/^\d+$/.test(prefixText) || prefix > (version === 4 ? 32 : 128)) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/**
 * An egress ipBlock as the API server takes it (each `except` a CIDR inside `cidr`, of its family)
 * that reaches none of the closed ranges: the internet, never the cluster's or the cloud's insides.
 */
function checkIpBlock(where: string, ipBlock: Doc, problems: string[]): void {
  const block = parseCidr(ipBlock.cidr);
  if (!block) {
    problems.push(`${where}: ipBlock cidr ${ipBlock.cidr} is not a CIDR`);
    return;
  }
  const inside = new BlockList();
  inside.addSubnet(block.address, block.prefix, block.family);
  const excepted = new BlockList();
  for (const except of (ipBlock.except ?? []) as unknown[]) {
    const range = parseCidr(except);
    if (!range || range.family !== block.family || range.prefix < block.prefix || !inside.check(range.address, range.family)) {
      problems.push(`${where}: ipBlock ${block.address}/${block.prefix} excepts ${except}, which is not a CIDR inside it`);
      continue;
    }
    excepted.addSubnet(range.address, range.prefix, range.family);
  }
  // Of the block's family only: an IPv6 block does not match IPv4 traffic (BlockList would, mapped).
  for (const address of closedAddresses) {
    const family = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    if (family === block.family && inside.check(address, family) && !excepted.check(address, family))
      problems.push(
        `${where}: ipBlock ${block.address}/${block.prefix} reaches ${address} (private or link-local ranges stay closed)`,
      );
  }
}

/** The gateway's Ingress: the only way in, TLS for its host, and the host the gateway's links name. */
function checkIngress(docs: Doc[], configMap: Doc, problems: string[]): void {
  for (const doc of docs.filter((candidate) => candidate.kind === 'Service')) {
    if (doc.spec?.type === 'LoadBalancer' || doc.spec?.type === 'NodePort')
      problems.push(
        `Service/${doc.metadata?.name}: type ${doc.spec.type} opens it outside the cluster; only the gateway's Ingress may`,
      );
  }
  const ingresses = docs.filter((doc) => doc.kind === 'Ingress');
  if (ingresses.length === 0) problems.push('infra/k8s: no Ingress for the gateway');
  for (const ingress of ingresses) {
    const where = `Ingress/${ingress.metadata?.name}`;
    const rules: Doc[] = ingress.spec?.rules ?? [];
    const backends = rules.flatMap((rule) => (rule.http?.paths ?? []).map((path: Doc) => path.backend?.service?.name));
    if (backends.length === 0 || backends.some((name) => name !== 'gateway'))
      problems.push(`${where}: routes to ${backends.join(', ')}; only the gateway is public`);
    const tlsHosts = new Set((ingress.spec?.tls ?? []).flatMap((tls: Doc) => tls.hosts ?? []));
    for (const rule of rules) {
      if (!rule.host) problems.push(`${where}: a rule without a host`);
      else if (!tlsHosts.has(rule.host)) problems.push(`${where}: ${rule.host} is served without TLS`);
    }
    const host = rules[0]?.host;
    for (const name of ['HALLMARK_PUBLIC_URL', 'HALLMARK_RESOLVER_URL']) {
      if (host && configMap[name] !== `https://${host}`)
        problems.push(`infra/k8s: ${name} is ${configMap[name]}, but the Ingress serves https://${host}`);
    }
    if (['off', undefined].includes(configMap.HALLMARK_TRUST_PROXY))
      problems.push(
        "infra/k8s: HALLMARK_TRUST_PROXY is off behind the Ingress: every client would share the proxy's rate limits",
      );
  }
}

/** The image: built in a stage of its own, run as a non-root user from the compiled output. */
function checkDockerfile(file: string, problems: string[]): void {
  const text = readFileSync(file, 'utf8');
  const stages = text.split(/^FROM /m).slice(1);
  const runtime = stages.at(-1) ?? '';
  if (stages.length < 2 || !/pnpm@[\d.]+ build/.test(text)) problems.push('Dockerfile: needs a build stage running pnpm build');
  if (/pnpm@[\d.]+ build/.test(runtime) || /typescript|tsx/.test(runtime))
    problems.push('Dockerfile: the runtime stage must not build or carry a TypeScript loader');
  const user = runtime.match(/^USER\s+(\S+)/m)?.[1];
  if (!user || /^(root|0)(:|$)/.test(user)) problems.push('Dockerfile: the runtime stage must run as a non-root USER');
  // Copied into the members' output (/out, which becomes /app): the migration Job applies it from there.
  if (!/cp infra\/postgres\/roles\.sql \/out\/infra\/postgres\//.test(text)) {
    problems.push(
      `Dockerfile: the image must hold infra/postgres/roles.sql at ${rolesFileInImage} (the migration Job applies it)`,
    );
  }
  const command = runtime.match(/^CMD\s+(\[.*\])/m)?.[1];
  checkCommand(
    'Dockerfile CMD',
    runtime.match(/^WORKDIR\s+(\S+)\s*$(?![\s\S]*^WORKDIR)/m)?.[1],
    command ? JSON.parse(command) : undefined,
    problems,
  );
}

/** A service's NATS URL names its own user, with a password (infra/nats/authorization.conf). */
function checkNatsUser(where: string, service: string, url: unknown, problems: string[]): void {
  // The user before the password, which may be a ${VARIABLE} compose fills in.
  const user = /^(?:nats|tls):\/\/([^:@/]+):[^@]+@/.exec(String(url ?? ''))?.[1];
  if (user !== service)
    problems.push(
      `${where}: ${service} must connect to NATS as its own user, ${service}, with its password (infra/nats/authorization.conf)`,
    );
}

/** infra/nats/authorization.conf is what infra/nats-permissions.ts makes, for the namespace the deployments use. */
function checkNatsAuthorizationFile(namespaces: unknown[], problems: string[]): void {
  for (const namespace of namespaces) {
    if (namespace !== undefined && namespace !== authorizedNamespace)
      problems.push(
        `HALLMARK_NAMESPACE ${String(namespace)}: infra/nats/authorization.conf allows ${authorizedNamespace}'s subjects only`,
      );
  }
  const written = existsSync(authorizationFile) ? readFileSync(authorizationFile, 'utf8') : '';
  if (written !== natsAuthorization(authorizedNamespace))
    problems.push('infra/nats/authorization.conf is not what infra/nats-permissions.ts makes: run pnpm gen:nats');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const problems = validateInfra();
  if (problems.length > 0) {
    process.stderr.write(`Deployment files disagree with the code:\n  ${problems.join('\n  ')}\n`);
    process.exit(1);
  }
  process.stdout.write('infra: docker-compose.yml and infra/k8s agree with the code\n');
}
