export { codeService } from './service.ts';
