import { Type } from '@sinclair/typebox';
import { defineRoute } from './http-route.ts';

const ConsolePage = Type.String({ description: 'The console’s page (HTML), or one of its built files' });
const ConsoleFileParam = Type.Object({
  file: Type.String({ description: 'A built file of the console (assets/…), or a page of the console (a deep link)' }),
});

const consoleResponses = {
  200: { description: 'The console’s page; a built file with its own type', schema: ConsolePage, contentType: 'text/html' },
  503: {
    description: 'The console is not built on this gateway: a page saying how to build it',
    schema: ConsolePage,
    contentType: 'text/html',
  },
} as const;

/** The web console (docs/CONSOLE.md): a single-page app, built by Vite, that talks only to /api/v1. */
export const consolePageRoute = defineRoute({
  operationId: 'getConsole',
  method: 'GET',
  path: '/console',
  summary: 'The web console: sign in with an API key, then keys, codes, scans and usage (docs/CONSOLE.md).',
  tags: ['system'],
  auth: 'public',
  responses: consoleResponses,
  errors: [],
});

export const consoleFileRoute = defineRoute({
  operationId: 'getConsoleFile',
  method: 'GET',
  path: '/console/{file}',
  catchAll: true,
  params: ConsoleFileParam,
  summary:
    'A built file of the web console (hashed assets are immutable); any other path without a file extension is one of its pages and answers the console’s page.',
  tags: ['system'],
  auth: 'public',
  responses: consoleResponses,
  errors: ['NOT_FOUND'],
});

export const consoleRoutes = [consolePageRoute, consoleFileRoute] as const;
