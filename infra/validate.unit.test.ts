import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { validateInfra } from './validate.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

describe('deployment files', () => {
  it('agree with the code', () => {
    expect(validateInfra()).toEqual([]);
  });

  it('are checked for real: a broken copy is reported', () => {
    const folder = mkdtempSync(join(tmpdir(), 'k8s-'));
    cpSync(join(root, 'infra/k8s'), folder, { recursive: true });
    const gateway = readFileSync(join(folder, 'gateway.yaml'), 'utf8');
    writeFileSync(
      join(folder, 'gateway.yaml'),
      gateway
        .replace('path: /ready', 'path: /readyz')
        .replace('hallmark/hallmark:0.1.0', 'hallmark/other:1')
        .replace('topologyKey: topology.kubernetes.io/zone', 'topologyKey: topology.kubernetes.io/region'),
    );
    writeFileSync(
      join(folder, 'config.yaml'),
      readFileSync(join(folder, 'config.yaml'), 'utf8').replace('HALLMARK_LOG_LEVEL', 'HALLMARK_LOGLEVEL'),
    );
    rmSync(join(folder, 'autoscaling.yaml'));
    const compose = join(folder, 'compose.yml');
    writeFileSync(
      compose,
      readFileSync(join(root, 'docker-compose.yml'), 'utf8').replace(
        'working_dir: /app/services/verify-service',
        'working_dir: /app/services/verifier',
      ),
    );
    const problems = validateInfra({ k8sFolder: folder, composeFile: compose });
    rmSync(folder, { recursive: true, force: true });
    expect(problems).toEqual(
      expect.arrayContaining([
        'Deployment/gateway: readinessProbe must GET /ready',
        'Deployment/gateway: image should be hallmark/hallmark:0.1.0',
        'Deployment/gateway: no topologySpreadConstraints over topology.kubernetes.io/zone selecting its own pods',
        'infra/k8s: HALLMARK_LOGLEVEL is not a setting the code reads',
        'kustomization.yaml lists missing autoscaling.yaml',
        'infra/k8s: no HorizontalPodAutoscaler for gateway',
        expect.stringContaining('docker-compose.yml verify-service: command'),
      ]),
    );
  });

  it('keep NATS (a user a service) and Redis behind credentials, and every secret in the Secret', () => {
    const folder = mkdtempSync(join(tmpdir(), 'k8s-'));
    cpSync(join(root, 'infra/k8s'), folder, { recursive: true });
    const config = readFileSync(join(folder, 'config.yaml'), 'utf8');
    const secrets = readFileSync(join(folder, 'secrets.example.yaml'), 'utf8');
    // The bus secret moved into the ConfigMap, the gateway's NATS URL without its credentials, and
    // verify-service on the gateway's NATS user.
    const secretLine = secrets.match(/^ {2}HALLMARK_BUS_SECRET: .*$/m)?.[0] ?? '';
    expect(secretLine).not.toBe('');
    writeFileSync(
      join(folder, 'config.yaml'),
      config.replace('  HALLMARK_NAMESPACE: hallmark', `${secretLine}\n  HALLMARK_NAMESPACE: hallmark`),
    );
    const verify = readFileSync(join(folder, 'verify-service.yaml'), 'utf8');
    writeFileSync(
      join(folder, 'verify-service.yaml'),
      verify.replace('hallmark-nats-users, key: verify-service', 'hallmark-nats-users, key: gateway'),
    );
    writeFileSync(
      join(folder, 'secrets.example.yaml'),
      secrets.replace(`${secretLine}\n`, '').replace(/nats:\/\/[^@\s]+@/, 'nats://'),
    );
    const compose = join(folder, 'compose.yml');
    writeFileSync(
      compose,
      readFileSync(join(root, 'docker-compose.yml'), 'utf8')
        .replace(/^ {4}HALLMARK_BUS_SECRET: .*\n/m, '')
        .replace(/"redis:\/\/[^@"]+@/, '"redis://')
        .replace('      - --requirepass\n', '')
        .replace('      - --appendonly\n      - "yes"\n', '')
        .replace('    volumes: [redis-data:/data]\n', '')
        .replace('"-c", "/etc/nats/authorization.conf", ', '')
        .replace(/^ {6}HALLMARK_NATS_AUCTION_SERVICE_PASSWORD: .*\n/m, '')
        .replace('nats://verify-service:', 'nats://gateway:'),
    );
    const problems = validateInfra({ k8sFolder: folder, composeFile: compose });
    rmSync(folder, { recursive: true, force: true });
    expect(problems).toEqual(
      expect.arrayContaining([
        'infra/k8s: HALLMARK_BUS_SECRET holds a secret and belongs in the Secret, not the ConfigMap',
        'Secret/hallmark-nats-users: gateway must connect to NATS as its own user, gateway, with its password (infra/nats/authorization.conf)',
        "Deployment/verify-service: HALLMARK_NATS_URL must come from its own NATS user's entry (hallmark-nats-users, key verify-service)",
        'docker-compose.yml gateway: HALLMARK_BUS_SECRET is not set',
        'docker-compose.yml code-service: HALLMARK_REDIS_URL carries no credentials (NATS and Redis run with authorization)',
        'docker-compose.yml: redis must run with --requirepass',
        'docker-compose.yml: redis must run with --appendonly yes',
        'docker-compose.yml: redis must keep /data on a volume',
        'docker-compose.yml: nats must run with its users (-c, infra/nats/authorization.conf mounted read-only)',
        'docker-compose.yml nats: HALLMARK_NATS_AUCTION_SERVICE_PASSWORD is not set (authorization.conf reads it)',
        'docker-compose.yml verify-service: verify-service must connect to NATS as its own user, verify-service, with its password (infra/nats/authorization.conf)',
      ]),
    );
  });

  it('hold the manifests to the Kubernetes schemas, the pod hardening, disruption budgets, network policies and the Ingress', () => {
    const folder = mkdtempSync(join(tmpdir(), 'k8s-'));
    cpSync(join(root, 'infra/k8s'), folder, { recursive: true });
    const edit = (file: string, ...replacements: Array<[string | RegExp, string]>) => {
      let text = readFileSync(join(folder, file), 'utf8');
      for (const [from, to] of replacements) {
        const next = text.replace(from, to);
        expect(next, `${file}: ${from}`).not.toBe(text);
        text = next;
      }
      writeFileSync(join(folder, file), text);
    };
    // A wrong field type only the Kubernetes schema knows about.
    edit('code-service.yaml', ['terminationGracePeriodSeconds: 30', 'terminationGracePeriodSeconds: thirty']);
    edit('verify-service.yaml', ['- { name: probes, containerPort: 9090 }', '- { name: probes, containerPort: "9090" }']);
    // Misspelt fields the schemas let through and kubectl's strict field validation refuses: a
    // container's, a pod's (one level too deep), and the Service's.
    edit('gateway.yaml', ['          resources:', '          resouces:'], ['      labels: {', '      lables: {']);
    edit('verify-service.yaml', [
      '  selector: { app.kubernetes.io/name: verify-service }\n  ports:',
      '  selectors: { app.kubernetes.io/name: verify-service }\n  ports:',
    ]);
    // A container that may write its root filesystem and keeps its capabilities, run through tsx.
    edit(
      'code-service.yaml',
      ['readOnlyRootFilesystem: true', 'readOnlyRootFilesystem: false'],
      ['            capabilities: { drop: [ALL] }\n', ''],
      ['"--conditions=hallmark-compiled", "--enable-source-maps", "dist/main.js"', '"--import", "tsx", "src/main.ts"'],
    );
    rmSync(join(folder, 'disruption-budgets.yaml'));
    // Ingress opened to every pod, DNS closed.
    edit(
      'network-policies.yaml',
      [
        /name: gateway-from-ingress\n(.*\n)*? {2}podSelector:\n {4}matchLabels: \{ app.kubernetes.io\/name: gateway \}/,
        'name: gateway-from-ingress\n  namespace: hallmark\nspec:\n  podSelector: {}',
      ],
      ['- { protocol: UDP, port: 53 }', '- { protocol: UDP, port: 5353 }'],
      // The photo bucket's IPv6 opened to unique- and link-local addresses, with an except the API server refuses.
      [
        '- ipBlock: { cidr: 2000::/3, except: [2001::/32, 2002::/16] }',
        '- ipBlock: { cidr: ::/0, except: [2001::/32, 10.0.0.0/8] }',
      ],
    );
    // A service on another's database role, one on the owner's URL, and no migration Job.
    edit('compliance-service.yaml', ['key: compliance-service', 'key: code-service']);
    edit('auction-service.yaml', [
      'name: hallmark-database-roles, key: auction-service',
      'name: hallmark-owner-database, key: HALLMARK_DATABASE_URL',
    ]);
    edit('secrets.example.yaml', ['postgres://hallmark_gateway:', 'postgres://hallmark:']);
    edit('kustomization.yaml', ['  - migrate-job.yaml\n', '']);
    rmSync(join(folder, 'migrate-job.yaml'));
    // The Ingress serves another host than the gateway's links name.
    edit('ingress.yaml', ['    - host: id.example.com', '    - host: api.example.com']);
    const dockerfile = join(folder, 'Dockerfile');
    // Run as root, and without roles.sql, which the migration Job applies from the image.
    writeFileSync(
      dockerfile,
      readFileSync(join(root, 'infra/docker/Dockerfile'), 'utf8')
        .replace('USER 1000:1000', 'USER root')
        .replace(' && mkdir -p /out/infra/postgres && cp infra/postgres/roles.sql /out/infra/postgres/', ''),
    );

    const problems = validateInfra({ k8sFolder: folder, dockerfile });
    rmSync(folder, { recursive: true, force: true });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^infra\/k8s\/code-service.yaml Deployment\/code-service: does not match the Kubernetes schema: .*terminationGracePeriodSeconds must be integer/,
        ),
        expect.stringMatching(
          /Deployment\/verify-service: does not match the Kubernetes schema: .*containerPort must be integer/,
        ),
        "infra/k8s/gateway.yaml Deployment/gateway: unknown field spec.template.spec.containers[0].resouces (kubectl's strict field validation refuses it)",
        "infra/k8s/gateway.yaml Deployment/gateway: unknown field spec.template.metadata.lables (kubectl's strict field validation refuses it)",
        "infra/k8s/verify-service.yaml Service/verify-service: unknown field spec.selectors (kubectl's strict field validation refuses it)",
        'Deployment/code-service container code-service: readOnlyRootFilesystem must be true',
        'Deployment/code-service container code-service: capabilities must drop ALL',
        expect.stringContaining('Deployment/code-service: command must pass --conditions=hallmark-compiled'),
        "Deployment/code-service: command runs a TypeScript loader; production runs pnpm build's output",
        'kustomization.yaml lists missing disruption-budgets.yaml',
        'Deployment/verify-service: no PodDisruptionBudget selects its pods',
        'Deployment/compliance-service: a NetworkPolicy admits traffic to its pods; only the gateway takes any',
        'Deployment/gateway: no NetworkPolicy lets its pods reach DNS (UDP 53)',
        expect.stringContaining('Deployment/code-service: a NetworkPolicy lets its pods reach ports 5353'),
        'Deployment/auction-service: ipBlock ::/0 excepts 10.0.0.0/8, which is not a CIDR inside it',
        'Deployment/auction-service: ipBlock ::/0 reaches fd00::1 (private or link-local ranges stay closed)',
        'Deployment/auction-service: ipBlock ::/0 reaches fe80::1 (private or link-local ranges stay closed)',
        'Ingress/gateway: api.example.com is served without TLS',
        'infra/k8s: HALLMARK_PUBLIC_URL is https://id.example.com, but the Ingress serves https://api.example.com',
        'Dockerfile: the runtime stage must run as a non-root USER',
        'Dockerfile: the image must hold infra/postgres/roles.sql at /app/infra/postgres/roles.sql (the migration Job applies it)',
        expect.stringContaining('Deployment/compliance-service: HALLMARK_DATABASE_URL must come from its own role'),
        expect.stringContaining('Deployment/auction-service: HALLMARK_DATABASE_URL must come from its own role'),
        'Secret/hallmark-database-roles: gateway must connect as hallmark_gateway (infra/postgres/roles.sql), not hallmark',
        "infra/k8s: no Job hallmark-migrate (the services' roles cannot apply migrations)",
      ]),
    );
  });

  it('give each Secret only to the pods that need it, and never apply one with `kubectl apply -k`', () => {
    const folder = mkdtempSync(join(tmpdir(), 'k8s-'));
    cpSync(join(root, 'infra/k8s'), folder, { recursive: true });
    const edit = (file: string, from: string, to: string) => {
      const text = readFileSync(join(folder, file), 'utf8');
      expect(text, `${file}: ${from}`).toContain(from);
      writeFileSync(join(folder, file), text.replace(from, to));
    };
    // The master key and the bucket's keys to the pods facing the most traffic; the Job given everything.
    edit(
      'gateway.yaml',
      '            - secretRef: { name: hallmark-s3 }\n',
      '            - secretRef: { name: hallmark-s3 }\n            - secretRef: { name: hallmark-master-key }\n',
    );
    edit(
      'verify-service.yaml',
      '            - secretRef: { name: hallmark-secrets }\n',
      '            - secretRef: { name: hallmark-secrets }\n            - secretRef: { name: hallmark-s3 }\n',
    );
    edit('code-service.yaml', 'name: HALLMARK_MASTER_KEY', 'name: HALLMARK_MASTER_KEY_UNUSED');
    edit(
      'migrate-job.yaml',
      '          env:\n',
      '          envFrom:\n            - secretRef: { name: hallmark-secrets }\n          env:\n',
    );
    // The Job migrating without granting: a table a release adds would meet 42501 in its service.
    edit('migrate-job.yaml', '"migrate", "--roles", "/app/infra/postgres/roles.sql"]', '"migrate"]');
    // A replica count under an autoscaler, and the Secrets applied with every release.
    edit('verify-service.yaml', 'spec:\n  # No replicas', 'spec:\n  replicas: 2\n  # No replicas');
    edit('kustomization.yaml', '  - config.yaml\n', '  - config.yaml\n  - secrets.example.yaml\n');
    // Webhooks closed: compliance-service's way out removed, and port 80 given to code-service.
    edit(
      'network-policies.yaml',
      'matchLabels: { app.kubernetes.io/name: compliance-service }',
      'matchLabels: { app.kubernetes.io/name: code-service }',
    );
    const compose = join(folder, 'compose.yml');
    writeFileSync(
      compose,
      readFileSync(join(root, 'docker-compose.yml'), 'utf8')
        .replace('      PORT: "8080"\n', '      PORT: "8080"\n      HALLMARK_MASTER_KEY: x\n')
        .replace('  stop_grace_period: 30s\n', ''),
    );
    const problems = validateInfra({ k8sFolder: folder, composeFile: compose });
    rmSync(folder, { recursive: true, force: true });
    expect(problems).toEqual(
      expect.arrayContaining([
        'Deployment/gateway: HALLMARK_MASTER_KEY reaches its pods; only code-service, auction-service, compliance-service may hold it',
        'Deployment/verify-service: HALLMARK_S3_ACCESS_KEY_ID reaches its pods; only gateway, auction-service use the photo bucket',
        'Deployment/code-service: HALLMARK_MASTER_KEY does not reach its pods',
        expect.stringContaining('Job/hallmark-migrate: should receive HALLMARK_DATABASE_URL only'),
        'Job/hallmark-migrate: must run hallmark migrate --roles /app/infra/postgres/roles.sql',
        'Deployment/verify-service: sets replicas, which every apply would reset under its HorizontalPodAutoscaler',
        'kustomization.yaml lists secrets.example.yaml: an example is not applied',
        expect.stringContaining('Deployment/code-service: a NetworkPolicy lets its pods reach ports 443, 80'),
        'docker-compose.yml gateway: HALLMARK_MASTER_KEY is set; only code-service, auction-service, compliance-service may hold it',
        expect.stringContaining('docker-compose.yml code-service: needs a stop_grace_period'),
      ]),
    );
  });
});
