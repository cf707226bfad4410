export { API_KEY_PREFIX, hashApiKey, keyIdOf, newApiKey } from './key-format.js';
export { MemoryKeyStore, type KeyStore, type StoredKey } from './key-store.js';
export { SqliteKeyStore } from './sqlite-key-store.js';
export { createApiKey, type CreateKeyOptions } from './create-key.js';
export { ApiKeyAuth } from './api-key-auth.js';
export { scopeGuard, READ_ONLY_OPERATIONS } from './scope-guard.js';
