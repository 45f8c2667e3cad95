import type { HttpMethod, RouteDefinition } from '@hallmark/contracts';

/**
 * For a request no route matched: the methods the contracts serve on that path, so the gateway can
 * answer 405 with `Allow` instead of 404. Empty when the path itself is unknown.
 */
export function createAllowedMethods(routes: readonly RouteDefinition[]): (path: string) => string[] {
  const matchers = routes.map((route) => ({ method: route.method, pattern: patternOf(route) }));
  return (path) => {
    const methods = new Set<HttpMethod>();
    for (const { method, pattern } of matchers) {
      if (!pattern.test(path)) continue;
      methods.add(method);
      // fastify answers HEAD on every GET route.
      if (method === 'GET') methods.add('HEAD');
    }
    return [...methods].sort();
  };
}

function patternOf(route: Pick<RouteDefinition, 'path' | 'catchAll'>): RegExp {
  const parts = route.path.split(/(\{[A-Za-z0-9_]+\})/);
  const source = parts
    .map((part, index) => {
      if (!/^\{[A-Za-z0-9_]+\}$/.test(part)) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      // A catch-all's last parameter takes the rest of the path; any other one segment.
      return route.catchAll && index === parts.length - 2 ? '.+' : '[^/]+';
    })
    .join('');
  return new RegExp(`^${source}$`);
}
