// The PASS/FAIL harness of the JavaScript probes that check one behaviour
// per step (changefeed.js, versioning.js, dataprotection.js): step runs
// one, printing PASS with its result or FAIL with the error; same and
// refused are the checks inside a step; failed() is how many failed, for
// the exit code.
let bad = 0;
async function step(name, f) {
  try { const r = await f(); console.log("PASS", name, r === undefined ? "" : JSON.stringify(r).slice(0, 150)); }
  catch (e) { bad++; console.log("FAIL", name, e.statusCode || "", e.code || "", (e.message || "").split("\n")[0].slice(0, 200)); }
}
function same(got, want, what) { if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`); }
// refused: f must fail with this HTTP status and, when code is given,
// this error code.
async function refused(f, status, code, what) {
  try { await f(); } catch (e) {
    if (e.statusCode === status && (!code || e.code === code)) return;
    throw new Error(`${what}: got ${e.statusCode} ${e.code}, want ${status} ${code}`);
  }
  throw new Error(`${what}: succeeded, want ${status} ${code}`);
}
async function all(iter) { const out = []; for await (const x of iter) out.push(x); return out; }
function failed() { return bad; }
module.exports = { step, same, refused, all, failed };
