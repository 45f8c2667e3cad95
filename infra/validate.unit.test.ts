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
      gateway.replace('path: /ready', 'path: /readyz').replace('hallmark/hallmark:0.1.0', 'hallmark/other:1'),
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
        'infra/k8s: HALLMARK_LOGLEVEL is not a setting the code reads',
        'kustomization.yaml lists missing autoscaling.yaml',
        'infra/k8s: no HorizontalPodAutoscaler for gateway',
        expect.stringContaining('docker-compose.yml verify-service: command'),
      ]),
    );
  });

  it('keep NATS and Redis behind credentials, and every secret in the Secret', () => {
    const folder = mkdtempSync(join(tmpdir(), 'k8s-'));
    cpSync(join(root, 'infra/k8s'), folder, { recursive: true });
    const config = readFileSync(join(folder, 'config.yaml'), 'utf8');
    // The bus secret moved into the ConfigMap, and the NATS URL without its credentials.
    const secretLine = config.match(/^ {2}HALLMARK_BUS_SECRET: .*$/m)?.[0] ?? '';
    expect(secretLine).not.toBe('');
    writeFileSync(
      join(folder, 'config.yaml'),
      config
        .replace(`${secretLine}\n`, '')
        .replace('  HALLMARK_NAMESPACE: hallmark', `${secretLine}\n  HALLMARK_NAMESPACE: hallmark`)
        .replace(/nats:\/\/[^@\s]+@/, 'nats://'),
    );
    const compose = join(folder, 'compose.yml');
    writeFileSync(
      compose,
      readFileSync(join(root, 'docker-compose.yml'), 'utf8')
        .replace(/^ {4}HALLMARK_BUS_SECRET: .*\n/m, '')
        .replace(/"redis:\/\/[^@"]+@/, '"redis://')
        .replace('"--requirepass", ', '')
        .replace('"--user", "hallmark", ', ''),
    );
    const problems = validateInfra({ k8sFolder: folder, composeFile: compose });
    rmSync(folder, { recursive: true, force: true });
    expect(problems).toEqual(
      expect.arrayContaining([
        'infra/k8s: HALLMARK_BUS_SECRET holds a secret and belongs in the Secret, not the ConfigMap',
        'infra/k8s: HALLMARK_NATS_URL carries no credentials (NATS and Redis run with authorization)',
        'docker-compose.yml gateway: HALLMARK_BUS_SECRET is not set',
        'docker-compose.yml code-service: HALLMARK_REDIS_URL carries no credentials (NATS and Redis run with authorization)',
        'docker-compose.yml: redis must run with --requirepass',
        'docker-compose.yml: nats must run with authorization (--user and --pass)',
      ]),
    );
  });
});
