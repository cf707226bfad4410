// The layers of the code, checked by dependency-cruiser (`npm run lint:deps`, part of `npm run lint`). They are
// the map in CONTRIBUTING.md: packages import only downward (protocol <- client, worker, server <- cli), and the
// server's rooms only downward (core <- storage <- domain <- edge <- the package's entry files). Import cycles are
// forbidden everywhere, type-only imports included.

/** A package seen from an import: its source or built files, or its name when `dist/` is not built yet. */
const pkg = (name) => `^(packages/${name}/|@berth/${name}(/|$))`;

const SERVER = 'packages/server/src/';
/** The bottom room of value types, the clock, the typed errors and the option defaults: they import no room. */
const CORE = `^${SERVER}(core/|clock\\.ts$|errors\\.ts$|defaults\\.ts$)`;
/** Storage: the store interface and its implementations, the replicas' bus on PostgreSQL. */
const STORAGE = `^${SERVER}(store|cluster)/`;
/** The job domain: the service, dispatcher and reports, worker sessions, the webhook outbox. */
const DOMAIN = `^${SERVER}(jobs|workers|webhooks)/`;
/**
 * The package's entry files compose everything: the root (`index.ts`, `server.ts`, `options.ts`), the store
 * subpaths (`store/<kind>/index.ts`, which also export that kind's API key store) and `testing/`.
 */
const ENTRY = `^${SERVER}(index\\.ts$|server\\.ts$|options\\.ts$|store/[^/]+/index\\.ts$|testing/)`;
/** Tests and their helpers may reach any room (they compose the pieces they test). */
const TESTS = '\\.test(-helpers)?\\.ts$';

/** A room that imports a room above it. */
function upward(name, from, above, comment) {
  return {
    name,
    comment,
    severity: 'error',
    from: { path: from, pathNot: [ENTRY, TESTS] },
    to: { path: above, pathNot: [`^${SERVER}options\\.ts$`] },
  };
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import cycle (type-only imports count): move the shared part down into a file both import.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'protocol-imports-no-package',
      comment: '@berth/protocol is the bottom package: it imports no other Berth package.',
      severity: 'error',
      from: { path: '^packages/protocol/' },
      to: { path: pkg('(client|worker|server|cli|create-worker)') },
    },
    {
      name: 'sdk-packages-import-only-protocol',
      comment: 'client, worker and server import only @berth/protocol; worker and server never import each other.',
      severity: 'error',
      from: { path: '^packages/(client|worker|server)/', pathNot: TESTS },
      to: { path: pkg('(client|worker|server|cli|create-worker)'), pathNot: '^packages/$1/' },
    },
    {
      name: 'create-worker-imports-no-package',
      comment: 'create-worker runs alone from npx: it imports no Berth package.',
      severity: 'error',
      from: { path: '^packages/create-worker/' },
      to: { path: pkg('(protocol|client|worker|server|cli)') },
    },
    {
      name: 'no-other-package-test-helpers',
      comment:
        "A package's sources and scripts import no other package's test helpers (*.test-helpers.ts): what they " +
        'need from it is a public export (such as @berth/server/testing).',
      severity: 'error',
      from: { path: '^packages/([^/]+)/(src|scripts)/' },
      to: { path: '^packages/[^/]+/.+\\.test-helpers\\.ts$', pathNot: '^packages/$1/' },
    },
    upward(
      'server-core-imports-no-room',
      CORE,
      `^${SERVER}(?!core/|clock\\.ts$|errors\\.ts$|defaults\\.ts$)`,
      'core/ (value types), clock.ts, errors.ts and defaults.ts are the bottom of the server: they import no room.',
    ),
    upward(
      'server-storage-imports-only-core',
      STORAGE,
      `^${SERVER}(?!core/|clock\\.ts$|errors\\.ts$|defaults\\.ts$|store/|cluster/)`,
      'store/ and cluster/ import only core/ and each other: what they need from above belongs in core/.',
    ),
    upward(
      'server-domain-imports-only-below',
      DOMAIN,
      `^${SERVER}(?!core/|clock\\.ts$|errors\\.ts$|defaults\\.ts$|store/|cluster/|jobs/|workers/|webhooks/)`,
      'jobs/, workers/ and webhooks/ import only the domain, storage and core rooms (not http/, ws/, pull/...).',
    ),
    {
      name: 'server-rooms-import-no-entry-file',
      comment: 'Rooms do not import the entry files (server.ts, index.ts, the store subpaths, testing/).',
      severity: 'error',
      from: { path: `^${SERVER}`, pathNot: [ENTRY, TESTS] },
      to: { path: ENTRY, pathNot: `^${SERVER}options\\.ts$` },
    },
    {
      name: 'server-rooms-read-options-as-types',
      comment: 'Rooms read the resolved options (plain data) as types only; options.ts itself composes the rooms.',
      severity: 'error',
      from: { path: `^${SERVER}`, pathNot: [ENTRY, TESTS] },
      to: { path: `^${SERVER}options\\.ts$`, dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules', '(^|/)dist/'] },
    exclude: { path: ['(^|/)node_modules/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.check.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'types', 'default'],
      extensions: ['.ts', '.js', '.mjs', '.d.ts'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
