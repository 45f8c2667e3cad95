export { CodeServiceConfig } from './config.ts';
export { codeService } from './service.ts';
