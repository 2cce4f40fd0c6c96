/**
 * The HTTP upgrade of a WebSocket client written by hand (RFC 6455 4.1), for the bench clients that
 * open sockets without ws (ws-floor.ts, ws-opens.ts): a key, the request, and the check of the
 * server's answer (status 101 and the accept key the client's key calls for).
 */
import { createHash, randomBytes } from 'node:crypto';

const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const ACCEPT = /^sec-websocket-accept:[ \t]*(\S+)[ \t]*$/im;

/** A new `Sec-WebSocket-Key`: 16 random bytes, base64. */
export function upgradeKey(): string {
  return randomBytes(16).toString('base64');
}

/** The upgrade request for `url` with `key`. */
export function upgradeRequest(url: URL, key: string): string {
  return (
    `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
    `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`
  );
}

/** Whether the response head (up to its blank line) switches protocols with the accept key `key` calls for. */
export function upgradeAccepted(head: string, key: string): boolean {
  const accept = createHash('sha1').update(key + WS_GUID).digest('base64');
  return head.startsWith('HTTP/1.1 101') && ACCEPT.exec(head)?.[1] === accept;
}
