// The JSON-lines protocol of the replica processes the fleet tests drive (fleet-child.cjs, control-child.cjs):
// requests `{id, op, ...}` on stdin, answers `{id, result|error}` (and one `{ready, ...}`) on stdout.
'use strict';

const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

/** Answers each request line with what `handle(msg)` resolves to, or the error it rejects with. */
function serve(handle) {
  let buffered = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    buffered += chunk;
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line.trim() === '') continue;
      const msg = JSON.parse(line);
      handle(msg).then(
        (result) => send({ id: msg.id, result }),
        (error) => send({ id: msg.id, error: String(error && error.stack ? error.stack : error) }),
      );
    }
  });
}

module.exports = { send, serve };
