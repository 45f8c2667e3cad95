export { buildGatewayApp, type GatewayDependencies } from './app.ts';
export { GatewayConfig } from './config.ts';
export { gatewayService } from './service.ts';
