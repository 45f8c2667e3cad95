import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildServices } from './build-services.ts';

// The end-to-end projects' globalSetup (vitest.config.ts): bundles every service's source once for
// this test run, so the distributed form's processes start from JavaScript (build-services.ts,
// service-process.ts). The test workers start after this and inherit the variable. Both end-to-end
// projects name it; the first to run builds, the other finds the bundles (the same process).
export default async function setup(): Promise<() => Promise<void>> {
  if (process.env.HALLMARK_TEST_SERVICE_BUNDLES) return async () => {};
  const outDir = await mkdtemp(join(tmpdir(), 'hallmark-test-services-'));
  await buildServices(outDir);
  process.env.HALLMARK_TEST_SERVICE_BUNDLES = outDir;
  return async () => {
    delete process.env.HALLMARK_TEST_SERVICE_BUNDLES;
    await rm(outDir, { recursive: true, force: true });
  };
}
