// What each process may do on NATS: one user a service (and one for the operator CLI), each
// allowed only the subjects it uses. With one user for all, anyone holding its password read every
// request, reply and event of every tenant (subscribe `>`), and any service could answer another's
// requests. Signatures (HALLMARK_BUS_SECRET) keep such a client from being believed; these
// permissions keep it from seeing or doing more than the service whose password it holds.
//
// `natsAuthorization(namespace)` renders the `authorization` block of nats-server's configuration;
// infra/nats/authorization.conf is it for the namespace `hallmark` (`pnpm gen:nats`; `pnpm check:infra`
// says when it is stale). Passwords are read by nats-server from its environment
// (`HALLMARK_NATS_<USER>_PASSWORD`), never written here. nats-server parses such a value: one that
// reads as a number (`3e8f…`, all digits) is refused, so passwords start with a letter.

import { claimStreamName, eventStreamName, inboxPrefixOf } from '@hallmark/bus';
import { type BackendService, backendServices, broadcasts } from '@hallmark/contracts';

/** The NATS users: a service each, by the name its connection carries, and the operator CLI. */
export const natsUsers = [
  'gateway',
  'code-service',
  'verify-service',
  'auction-service',
  'compliance-service',
  'hallmark-cli',
] as const;
export type NatsUser = (typeof natsUsers)[number];

interface Access {
  /** Answers `rpc.<itself>.*` (a backend service). */
  serves: boolean;
  /** The services it sends requests to. */
  calls: readonly BackendService[];
  /** Publishes events (`events.>`: scans). */
  publishesEvents: boolean;
  /** Its durable consumers of the event stream. */
  consumers: readonly string[];
  /** Opens the installation claim (every process of the distributed form, at start). */
  claimsNamespace: boolean;
}

const access: Record<NatsUser, Access> = {
  gateway: { serves: false, calls: backendServices, publishesEvents: false, consumers: [], claimsNamespace: true },
  'code-service': { serves: true, calls: [], publishesEvents: false, consumers: [], claimsNamespace: true },
  'verify-service': {
    serves: true,
    calls: ['code-service', 'compliance-service'],
    publishesEvents: true,
    consumers: ['verify-service-scan-history'],
    claimsNamespace: true,
  },
  'auction-service': {
    serves: true,
    calls: ['compliance-service'],
    publishesEvents: false,
    consumers: [],
    claimsNamespace: true,
  },
  'compliance-service': {
    serves: true,
    calls: [],
    publishesEvents: false,
    consumers: ['compliance-service-webhook-scans'],
    claimsNamespace: true,
  },
  // Broadcasts what it changes (a key revoked, a GTIN granted); its bus makes sure the event stream exists.
  'hallmark-cli': { serves: false, calls: [], publishesEvents: false, consumers: [], claimsNamespace: false },
};

export interface NatsPermissions {
  publish: string[];
  subscribe: string[];
}

/** The subjects `user` may publish and subscribe to, in `namespace` (HALLMARK_NAMESPACE). */
export function natsPermissions(namespace: string, user: NatsUser): NatsPermissions {
  const { serves, calls, publishesEvents, consumers, claimsNamespace } = access[user];
  const events = eventStreamName(namespace);
  const claim = claimStreamName(namespace);
  const api = '$JS.API';
  const broadcastSubjects = Object.values(broadcasts).map((subject) => `${namespace}.${subject}`);
  const streamAdmin = (stream: string) => [
    `${api}.STREAM.INFO.${stream}`,
    `${api}.STREAM.CREATE.${stream}`,
    `${api}.STREAM.UPDATE.${stream}`,
  ];
  const consumer = (durable: string) => [
    // nats-server 2.9 and later name the consumer in the subject (with its filter after it); older, DURABLE.CREATE.
    `${api}.CONSUMER.CREATE.${events}.${durable}`,
    `${api}.CONSUMER.CREATE.${events}.${durable}.>`,
    `${api}.CONSUMER.DURABLE.CREATE.${events}.${durable}`,
    `${api}.CONSUMER.INFO.${events}.${durable}`,
    `${api}.CONSUMER.MSG.NEXT.${events}.${durable}`,
    `$JS.ACK.${events}.${durable}.>`,
  ];
  return {
    publish: [
      ...calls.map((service) => `${namespace}.rpc.${service}.>`),
      // Replies go to the caller's inbox; they are signed for the request they answer.
      ...(serves ? ['_INBOX.>'] : []),
      ...(publishesEvents ? [`${namespace}.events.>`] : []),
      ...broadcastSubjects,
      `${api}.INFO`,
      ...streamAdmin(events),
      ...consumers.flatMap(consumer),
      ...(claimsNamespace
        ? [...streamAdmin(claim), `${api}.STREAM.MSG.GET.${claim}`, `${api}.STREAM.PURGE.${claim}`, `${namespace}.installation`]
        : []),
    ],
    subscribe: [
      `${inboxPrefixOf(user)}.>`,
      ...(serves ? [`${namespace}.rpc.${user}.>`] : []),
      ...(user === 'hallmark-cli' ? [] : broadcastSubjects),
    ],
  };
}

/** The environment variable nats-server reads `user`'s password from. */
export const passwordVariableOf = (user: NatsUser) => `HALLMARK_NATS_${user.replace(/-/g, '_').toUpperCase()}_PASSWORD`;

/** nats-server's `authorization` block: every user with its permissions; passwords from the server's environment. */
export function natsAuthorization(namespace: string): string {
  const list = (subjects: readonly string[]) => subjects.map((subject) => `          "${subject}"`).join('\n');
  const users = natsUsers.map((user) => {
    const { publish, subscribe } = natsPermissions(namespace, user);
    return [
      '    {',
      `      user: "${user}"`,
      `      password: $${passwordVariableOf(user)}`,
      '      permissions: {',
      `        publish: { allow: [\n${list(publish)}\n        ] }`,
      `        subscribe: { allow: [\n${list(subscribe)}\n        ] }`,
      '      }',
      '    }',
    ].join('\n');
  });
  return [
    `# Generated from infra/nats-permissions.ts for the namespace "${namespace}" (pnpm gen:nats); do not edit.`,
    '# Each user is a service (or the operator CLI), allowed only the subjects it uses. nats-server reads',
    '# the passwords from its environment: HALLMARK_NATS_<USER>_PASSWORD, each led by a letter (a value',
    '# that reads as a number, such as 3e8f… or all digits, is refused).',
    'authorization {',
    '  users: [',
    users.join('\n'),
    '  ]',
    '}',
    '',
  ].join('\n');
}
