// One QR renderer thread (see qr-renderers.ts): qrcode draws and compresses a PNG synchronously,
// which for a 4,096-pixel image holds a thread for a second or more. Plain JavaScript, so the thread
// starts under whatever loader the process runs with (tsx, vitest, or none).
import { parentPort } from 'node:worker_threads';
import QRCode from 'qrcode';

parentPort?.on('message', (job) => {
  QRCode.toBuffer(job.text, job.options).then(
    (png) => parentPort?.postMessage({ id: job.id, png }),
    (error) => parentPort?.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) }),
  );
});
