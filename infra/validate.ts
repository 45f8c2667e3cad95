import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CodeServiceConfig } from '@hallmark/code-service';
import { GatewayConfig } from '@hallmark/gateway';
import { DistributedConfig } from '@hallmark/runtime';
import { parseAllDocuments } from 'yaml';

// Docker cannot run here, so CI checks the deployment files against the code instead:
// they parse, carry the fields Kubernetes and Compose need, and name only images, services,
// commands and environment variables that exist.

const root = fileURLToPath(new URL('..', import.meta.url));
const services = ['gateway', 'code-service', 'verify-service', 'auction-service', 'compliance-service'];
const image = 'hallmark/hallmark:0.1.0';
const knownVariables = new Set(
  [DistributedConfig, GatewayConfig, CodeServiceConfig].flatMap((schema) => Object.keys(schema.properties)),
);
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

function documentsOf(file: string): Doc[] {
  // merge: Compose files share settings through YAML merge keys (<<).
  const documents = parseAllDocuments(readFileSync(file, 'utf8'), { merge: true });
  for (const document of documents) {
    if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]?.message}`);
  }
  return documents.map((document) => document.toJS() as Doc).filter(Boolean);
}

function checkCommand(where: string, workingDir: unknown, command: unknown, problems: string[]): void {
  const dir = String(workingDir ?? '').replace(/^\/app\//, '');
  const entry = Array.isArray(command) ? command.at(-1) : undefined;
  if (!dir || typeof entry !== 'string' || !existsSync(join(root, dir, entry))) {
    problems.push(`${where}: command ${JSON.stringify(command)} in ${workingDir} does not name a file of this repository`);
  }
}

/** Returns every problem found; an empty list means the files agree with the code. */
export function validateInfra(options: { k8sFolder?: string; composeFile?: string } = {}): string[] {
  const problems: string[] = [];
  const k8sFolder = options.k8sFolder ?? join(root, 'infra/k8s');
  const composeFile = options.composeFile ?? join(root, 'docker-compose.yml');

  // Kubernetes
  const docs: Array<Doc & { file: string }> = [];
  const kustomization = documentsOf(join(k8sFolder, 'kustomization.yaml'))[0] ?? {};
  const listed = new Set<string>(kustomization.resources ?? []);
  for (const file of readdirSync(k8sFolder).filter((name) => name.endsWith('.yaml') && name !== 'kustomization.yaml')) {
    if (!listed.has(file)) problems.push(`infra/k8s/${file} is not listed in kustomization.yaml`);
    for (const doc of documentsOf(join(k8sFolder, file))) docs.push({ ...doc, file });
  }
  for (const file of listed) if (!existsSync(join(k8sFolder, file))) problems.push(`kustomization.yaml lists missing ${file}`);
  for (const doc of docs) {
    const where = `infra/k8s/${doc.file} ${doc.kind}/${doc.metadata?.name}`;
    if (!doc.apiVersion || !doc.kind || !doc.metadata?.name) problems.push(`${where}: needs apiVersion, kind and metadata.name`);
  }
  const configMap = docs.find((doc) => doc.kind === 'ConfigMap')?.data ?? {};
  const secret = docs.find((doc) => doc.kind === 'Secret')?.stringData ?? {};
  for (const name of [...Object.keys(configMap), ...Object.keys(secret)]) {
    if (!knownVariables.has(name)) problems.push(`infra/k8s: ${name} is not a setting the code reads`);
  }
  for (const required of requiredVariables) {
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
    const portNames = new Set((container?.ports ?? []).map((port: Doc) => port.name));
    if (!portNames.has(container?.readinessProbe?.httpGet?.port))
      problems.push(`${where}: the readiness probe's port is not declared`);
    const serviceDoc = docs.find((doc) => doc.kind === 'Service' && doc.metadata?.name === service);
    if (!serviceDoc) problems.push(`infra/k8s: no Service for ${service}`);
    else if (serviceDoc.spec?.selector?.['app.kubernetes.io/name'] !== service)
      problems.push(`Service/${service}: selector does not select its pods`);
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
  if (!natsCommand.includes('--user') || !natsCommand.includes('--pass'))
    problems.push('docker-compose.yml: nats must run with authorization (--user and --pass)');
  if (!(compose.services?.redis?.command ?? []).map(String).includes('--requirepass'))
    problems.push('docker-compose.yml: redis must run with --requirepass');
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
    for (const name of ['HALLMARK_NATS_URL', 'HALLMARK_REDIS_URL']) {
      if (name in (entry.environment ?? {}) && !carriesCredentials(entry.environment[name]))
        problems.push(`${where}: ${name} carries no credentials (NATS and Redis run with authorization)`);
    }
    for (const dependency of ['nats', 'postgres', 'redis']) {
      if (entry.depends_on?.[dependency]?.condition !== 'service_healthy')
        problems.push(`${where}: should wait for ${dependency} to be healthy`);
    }
  }
  const dockerfile = compose.services?.gateway?.build?.dockerfile;
  if (!dockerfile || !existsSync(join(root, dockerfile)))
    problems.push(`docker-compose.yml: build.dockerfile ${dockerfile} does not exist`);
  return problems;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const problems = validateInfra();
  if (problems.length > 0) {
    process.stderr.write(`Deployment files disagree with the code:\n  ${problems.join('\n  ')}\n`);
    process.exit(1);
  }
  process.stdout.write('infra: docker-compose.yml and infra/k8s agree with the code\n');
}
