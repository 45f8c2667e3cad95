/** The services that answer over the bus. The gateway calls them; they do not call the gateway. */
export const backendServices = ['code-service', 'verify-service', 'auction-service', 'compliance-service'] as const;
export type BackendService = (typeof backendServices)[number];

export const allServices = ['gateway', ...backendServices] as const;
export type ServiceName = (typeof allServices)[number];

export function isBackendService(value: string): value is BackendService {
  return (backendServices as readonly string[]).includes(value);
}
