export { verifyService } from './service.ts';
