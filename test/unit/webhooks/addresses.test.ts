import { describe, expect, it } from 'vitest';
import { addressRefusal, classifyAddress, parseAllowedHttpHosts, webhookUrlProblem } from '../../../functions/core/webhooks/addresses.js';

const ALLOWED = parseAllowedHttpHosts('127.0.0.1, localhost,[::1]');

describe('classifyAddress', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['93.184.216.34', 'public'],
    ['172.32.0.1', 'public'],
    ['100.128.0.1', 'public'],
    ['2606:4700::1111', 'public'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.5.4', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.1.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.3', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['FD00:EC2:0:0::254', 'metadata'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['64:ff9b:1::a00:1', 'reserved'],
    ['example.com', 'invalid'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it.each([
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:8.8.8.8', 'public'],
    ['::ffff:0:192.168.0.1', 'private'],
    ['64:ff9b::169.254.169.254', 'metadata'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['::10.0.0.1', 'private'],
    ['::127.0.0.1', 'loopback'],
    ['::8.8.8.8', 'public'],
    ['2002:a9fe:a9fe::1', 'metadata'],
    ['2002:0808:0808::1', 'public'],
  ])('%s (an IPv6 form of an IPv4 address) is that address: %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });
});

describe('addressRefusal', () => {
  it('says which address and why, naming the IPv4 address a mapped one stands for', () => {
    expect(addressRefusal('169.254.169.254', false)).toBe('refused: 169.254.169.254 is a link-local/metadata address');
    expect(addressRefusal('10.0.0.1', true)).toBe('refused: 10.0.0.1 is a private address');
    expect(addressRefusal('::ffff:a9fe:a9fe', false)).toBe(
      'refused: ::ffff:a9fe:a9fe (IPv4 169.254.169.254) is a link-local/metadata address',
    );
  });

  it('lets loopback through only for an allowed host, and nothing else private', () => {
    expect(addressRefusal('127.0.0.1', true)).toBeUndefined();
    expect(addressRefusal('::1', true)).toBeUndefined();
    expect(addressRefusal('127.0.0.1', false)).toBe('refused: 127.0.0.1 is a loopback address');
    expect(addressRefusal('192.168.0.1', true)).toMatch(/private/);
    expect(addressRefusal('169.254.169.254', true)).toMatch(/metadata/);
    expect(addressRefusal('8.8.8.8', false)).toBeUndefined();
  });
});

describe('webhookUrlProblem', () => {
  it('accepts https URLs and http ones of the allowed hosts', () => {
    expect(webhookUrlProblem('https://hooks.example.com/dss?x=1', ALLOWED)).toBeUndefined();
    expect(webhookUrlProblem('http://127.0.0.1:9000/hook', ALLOWED)).toBeUndefined();
    expect(webhookUrlProblem('http://LOCALHOST:9000/hook', ALLOWED)).toBeUndefined();
    expect(webhookUrlProblem('http://[::1]:9000/hook', ALLOWED)).toBeUndefined();
  });

  it('refuses http elsewhere, other schemes, credentials and text that is no URL', () => {
    expect(webhookUrlProblem('http://hooks.example.com/', ALLOWED)).toMatch(/must use https/);
    expect(webhookUrlProblem('http://hooks.example.com/', [])).toMatch(/\(none\)/);
    expect(webhookUrlProblem('ftp://hooks.example.com/', ALLOWED)).toBe('must use https');
    expect(webhookUrlProblem('https://user:pw@hooks.example.com/', ALLOWED)).toMatch(/user name or password/);
    expect(webhookUrlProblem('hooks.example.com', ALLOWED)).toMatch(/not an absolute URL/);
  });

  it('refuses a literal private, metadata or mapped address, however it is spelled', () => {
    expect(webhookUrlProblem('https://10.0.0.1/hook', ALLOWED)).toBe('refused: 10.0.0.1 is a private address');
    expect(webhookUrlProblem('https://169.254.169.254/latest', ALLOWED)).toMatch(/metadata/);
    expect(webhookUrlProblem('https://[::ffff:169.254.169.254]/', ALLOWED)).toMatch(/metadata/);
    expect(webhookUrlProblem('https://[fd00:ec2::254]/', ALLOWED)).toMatch(/metadata/);
    expect(webhookUrlProblem('https://0xa9.0xfe.0xa9.0xfe/', ALLOWED)).toMatch(/169\.254\.169\.254 is a link-local\/metadata/);
    expect(webhookUrlProblem('https://2852039166/', ALLOWED)).toMatch(/metadata/);
    expect(webhookUrlProblem('https://127.0.0.2/', ['localhost'])).toMatch(/loopback/);
  });
});
