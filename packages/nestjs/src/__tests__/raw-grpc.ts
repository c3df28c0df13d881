import { connect, type ClientHttp2Session, type OutgoingHttpHeaders } from 'node:http2';

/** How a raw gRPC call ended: its grpc-status, or the HTTP/2 stream's reset code when there was none. */
export interface RawGrpcOutcome {
  readonly status: number | undefined;
  readonly reset: number | undefined;
}

/**
 * gRPC over a bare HTTP/2 session, so a test can send header values a gRPC library would refuse to write (a hostile
 * `grpc-timeout`, 10 kB of metadata). One unary call with an empty message: the 5-byte frame of a zero-length,
 * uncompressed protobuf message.
 */
export class RawGrpcClient {
  readonly #session: ClientHttp2Session;

  constructor(url: string) {
    this.#session = connect(`http://${url}`);
    this.#session.on('error', () => undefined); // a reset or refused stream is an outcome, not a crash
  }

  call(path: string, headers: OutgoingHttpHeaders): Promise<RawGrpcOutcome> {
    return new Promise((resolve) => {
      const stream = this.#session.request({
        ':method': 'POST',
        ':path': path,
        'content-type': 'application/grpc',
        te: 'trailers',
        ...headers,
      });
      let status: number | undefined;
      const read = (h: Record<string, unknown>): void => {
        if (h['grpc-status'] !== undefined) status = Number(h['grpc-status']);
      };
      stream.on('response', read); // a trailers-only answer carries the status in its headers
      stream.on('trailers', read);
      stream.on('data', () => undefined);
      stream.on('error', () => undefined);
      stream.on('close', () => resolve({ status, reset: status === undefined ? stream.rstCode : undefined }));
      stream.end(Buffer.alloc(5));
    });
  }

  close(): void {
    this.#session.close();
  }
}
