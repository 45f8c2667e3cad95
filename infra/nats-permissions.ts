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

/** A broadcast, by its name in contracts' `broadcasts`. */
export type BroadcastName = keyof typeof broadcasts;

export interface Access {
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
  /**
   * The broadcasts it sends, and those it listens to. A broadcast is signed, but a signed one can be
   * sent again within its 30 s window by whoever reads it; with these, only a user that reads a
   * broadcast and may send it (its own senders) could. infra/nats-permissions.unit.test.ts checks
   * them against the `broadcast(…)` and `onBroadcast(…)` calls in each service's sources.
   */
  sends: readonly BroadcastName[];
  hears: readonly BroadcastName[];
}

const access: Record<NatsUser, Access> = {
  gateway: {
    serves: false,
    calls: backendServices,
    publishesEvents: false,
    consumers: [],
    claimsNamespace: true,
    sends: ['apiKeyRevoked', 'publicKeyRegistered', 'publicKeyRevoked', 'brandingChanged'],
    hears: ['apiKeyRevoked', 'publicKeyRegistered', 'publicKeyRevoked', 'signingKeyAdded', 'gtinOwnershipChanged'],
  },
  'code-service': {
    serves: true,
    calls: [],
    publishesEvents: false,
    consumers: [],
    claimsNamespace: true,
    sends: ['gtinOwnershipChanged', 'signingKeyAdded'],
    hears: ['signingKeyAdded', 'gtinOwnershipChanged'],
  },
  'verify-service': {
    serves: true,
    calls: ['code-service', 'compliance-service'],
    publishesEvents: true,
    consumers: ['verify-service-scan-history'],
    claimsNamespace: true,
    sends: ['codeBlocked', 'codeBlockLifted', 'blocklistChanged'],
    hears: [
      'codeBlocked',
      'codeBlockLifted',
      'blocklistChanged',
      'publicKeyRevoked',
      'publicKeyRegistered',
      'gtinOwnershipChanged',
      'brandingChanged',
      'complianceConfigChanged',
    ],
  },
  'auction-service': {
    serves: true,
    calls: ['compliance-service'],
    publishesEvents: false,
    consumers: [],
    claimsNamespace: true,
    sends: ['gtinOwnershipChanged', 'signingKeyAdded'],
    hears: ['signingKeyAdded', 'publicKeyRevoked', 'complianceConfigChanged'],
  },
  'compliance-service': {
    serves: true,
    calls: [],
    publishesEvents: false,
    consumers: ['compliance-service-webhook-scans'],
    claimsNamespace: true,
    sends: ['complianceConfigChanged'],
    hears: ['signingKeyAdded'],
  },
  // Broadcasts what it changes (a key revoked, a GTIN granted); its bus makes sure the event stream exists.
  'hallmark-cli': {
    serves: false,
    calls: [],
    publishesEvents: false,
    consumers: [],
    claimsNamespace: false,
    sends: ['apiKeyRevoked', 'gtinOwnershipChanged'],
    hears: [],
  },
};

/** What `user` may send and listen to, as declared above (for the check against the sources). */
export const accessOf = (user: NatsUser): Readonly<Access> => access[user];

export interface NatsPermissions {
  publish: string[];
  subscribe: string[];
}

/** The subjects `user` may publish and subscribe to, in `namespace` (HALLMARK_NAMESPACE). */
export function natsPermissions(namespace: string, user: NatsUser): NatsPermissions {
  const { serves, calls, publishesEvents, consumers, claimsNamespace, sends, hears } = access[user];
  const events = eventStreamName(namespace);
  const claim = claimStreamName(namespace);
  const api = '$JS.API';
  const broadcastSubjects = (names: readonly BroadcastName[]) => names.map((name) => `${namespace}.${broadcasts[name]}`);
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
      ...broadcastSubjects(sends),
      `${api}.INFO`,
      ...streamAdmin(events),
      ...consumers.flatMap(consumer),
      ...(claimsNamespace
        ? [...streamAdmin(claim), `${api}.STREAM.MSG.GET.${claim}`, `${api}.STREAM.PURGE.${claim}`, `${namespace}.installation`]
        : []),
    ],
    subscribe: [`${inboxPrefixOf(user)}.>`, ...(serves ? [`${namespace}.rpc.${user}.>`] : []), ...broadcastSubjects(hears)],
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
