// An upload to a real server whose body is sent in parts and held open in between, as a large upload in progress
// is: tests kill the server while an import is running.

import { request } from 'node:http';

export interface HeldUpload {
  write(chunk: string | Uint8Array): Promise<void>;
  /** Ends the body; the server's answer (status and JSON), or the error if the connection died. */
  end(): Promise<{ status: number; body: any }>;
  /** The answer, however the request ends (the server killed: an error). */
  answer: Promise<{ status: number; body: any }>;
  /** Drops the connection (a test that failed midway, so the server can close). */
  destroy(): void;
}

export function heldUpload(url: string, token: string, contentType: string): HeldUpload {
  const req = request(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': contentType, 'transfer-encoding': 'chunked' },
  });
  const answer = new Promise<{ status: number; body: any }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  // A test that kills the server expects the error; this keeps it from being unhandled meanwhile.
  answer.catch(() => undefined);
  return {
    answer,
    write: (chunk) => new Promise((resolve, reject) => req.write(chunk, (err) => (err ? reject(err) : resolve()))),
    end: () => {
      req.end();
      return answer;
    },
    destroy: () => req.destroy(),
  };
}
