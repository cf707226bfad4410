import { describe, expect, it } from 'vitest';
import { classifyAddress, refusal } from './address-policy.js';
import { postWebhook } from './post.js';

describe('classifyAddress', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fd00::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:4860:4860::8888', 'public'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::FFFF:A9FE:A9FE', 'link-local'],
    ['::ffff:8.8.8.8', 'public'],
    ['[::1]', 'loopback'],
    // IPv4 inside IPv6 (issue #36): NAT64, 6to4 and Teredo are judged by the IPv4 address they carry.
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['64:ff9b::169.254.169.254', 'link-local'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::808:808', 'public'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:a9fe:a9fe::1', 'link-local'],
    ['2002:c0a8:101::', 'private'],
    ['2002:808:808::1', 'public'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'], // Teredo client 127.0.0.1 (inverted bits)
    ['2001:0:a9fe:a9fe::1', 'link-local'], // Teredo server 169.254.169.254
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'public'], // client 8.8.8.8
    ['::7f00:1', 'loopback'],
    ['not-an-ip', 'reserved'],
  ])('%s is %s', (ip, kind) => {
    expect(classifyAddress(ip)).toBe(kind);
  });

  it('refusal names the kind and how to allow it; allowed kinds pass; never-allowable kinds have no hint', () => {
    expect(refusal('127.0.0.1', [])).toMatch(
      /non-public address \(loopback\) \(allow it with webhooks.allow: \['loopback'\]\)/,
    );
    expect(refusal('127.0.0.1', ['loopback'])).toBeUndefined();
    expect(refusal('10.0.0.1', ['loopback'])).toMatch(/private/);
    expect(refusal('0.0.0.0', ['loopback', 'private', 'link-local'])).toBe(
      'refused: 0.0.0.0 is a non-public address (unspecified)',
    );
    expect(refusal('93.184.216.34', [])).toBeUndefined();
  });
});

describe('postWebhook and IPv4 inside IPv6', () => {
  it.each(['http://[64:ff9b::a9fe:a9fe]/latest', 'http://[2002:7f00:1::]:8080/hook'])(
    '%s is refused before dialing',
    async (url) => {
      const r = await postWebhook(url, '{}', {}, { timeoutMs: 1000, allow: [] });
      expect(r.refused).toBe(true);
      expect(r.error).toMatch(/non-public address \((link-local|loopback)\)/);
    },
  );
});
