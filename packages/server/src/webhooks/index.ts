export { classifyAddress, ALLOWABLE_KINDS, type AddressKind, type AllowableKind } from './address-policy.js';
export { resolveWebhookOptions, type WebhookOptions, type ResolvedWebhookOptions } from './webhook-options.js';
export { WebhookSender } from './webhook-sender.js';
export { signatureHeaders } from './signing.js';
export { newWebhookDelivery, deliveryState } from './delivery.js';
