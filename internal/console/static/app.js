// Cerulean's console: plain JavaScript, no framework, no request outside
// this origin. Every storage call is signed here with Shared Key (Web
// Crypto HMAC-SHA256) and sent to /api/{service}/..., which the console
// passes on to that service's port (see internal/console's package doc).
'use strict';

const S = { cfg: null, account: '', key: '', cryptoKey: null, view: 'blob', timer: null };

// ---- small DOM helpers ----
function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const kid of kids.flat()) {
    if (kid === undefined || kid === null || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}
const $ = (sel) => document.querySelector(sel);
function status(msg, isError) {
  const el = $('#status');
  el.textContent = msg || '';
  el.className = isError ? 'error' : '';
}
function fail(e) { status(e.message || String(e), true); }
function fmtTime(s) {
  if (!s) return '';
  const d = new Date(s);
  if (isNaN(d)) return s;
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z').replace(/Z$/, ' UTC');
}
function fmtSize(n) {
  n = Number(n);
  if (!isFinite(n)) return '';
  if (n < 1024) return n + ' B';
  const u = ['KiB', 'MiB', 'GiB', 'TiB'];
  let i = -1;
  do { n /= 1024; i++; } while (n >= 1024 && i < u.length - 1);
  return n.toFixed(1) + ' ' + u[i];
}
function table(headers, rows, caption) {
  return h('div', { class: 'scroll' }, h('table', {},
    caption ? h('caption', { class: 'muted', text: caption }) : null,
    h('thead', {}, h('tr', {}, headers.map((x) => h('th', { scope: 'col', text: x })))),
    h('tbody', {}, rows)));
}
const enc = encodeURIComponent;
const encPath = (name) => name.split('/').map(enc).join('/');

// ---- Shared Key ----
class ApiError extends Error {
  constructor(status, code, text) {
    super(status + (code ? ' ' + code : '') + (text ? ': ' + text : ''));
    this.status = status; this.code = code;
  }
}

async function hmac(str) {
  if (!S.cryptoKey) {
    const raw = Uint8Array.from(atob(S.key), (c) => c.charCodeAt(0));
    S.cryptoKey = await crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  }
  const sig = await crypto.subtle.sign('HMAC', S.cryptoKey, new TextEncoder().encode(str));
  return btoa(String.fromCharCode(...new Uint8Array(sig)));
}

// stringToSign builds the Shared Key string-to-sign of a request: for
// Blob, Queue and File the full form; for Table its own short form.
// path is the escaped path the service receives ("/account/..."), query
// a list of [name, value] pairs as sent.
function stringToSign(svc, method, path, query, hdr) {
  const get = (n) => hdr[n] || '';
  if (svc === 'table') {
    const comp = query.find(([k]) => k === 'comp');
    return [method, get('content-md5'), get('content-type'), get('x-ms-date')].join('\n') + '\n' +
      '/' + S.account + path + (comp ? '?comp=' + comp[1] : '');
  }
  const names = Object.keys(hdr).filter((n) => n.startsWith('x-ms-')).sort();
  const canonHeaders = names.map((n) => n + ':' + String(hdr[n]).trim() + '\n').join('');
  const params = {};
  for (const [k, v] of query) (params[k.toLowerCase()] ||= []).push(v);
  const canonQuery = Object.keys(params).sort().map((k) => '\n' + k + ':' + params[k].sort().join(',')).join('');
  const len = get('content-length');
  return [method, get('content-encoding'), get('content-language'), len === '0' ? '' : len, get('content-md5'),
    get('content-type'), '', get('if-modified-since'), get('if-match'), get('if-none-match'),
    get('if-unmodified-since'), get('range')].join('\n') + '\n' + canonHeaders + '/' + S.account + path + canonQuery;
}

const versions = { blob: '2021-12-02', queue: '2021-12-02', file: '2021-12-02', dfs: '2021-12-02', table: '2019-02-02' };

// api calls a service: path after the account ("" for the account
// itself), query as an object or pairs, headers (lowercase names), body
// a string, Blob or ArrayBuffer. It throws an ApiError for a status of
// 400 or more, with the service's error code.
async function api(svc, method, path, opts = {}) {
  if (!S.account || !S.key) throw new Error('Enter an account and its key first.');
  const query = Array.isArray(opts.query) ? opts.query : Object.entries(opts.query || {}).filter(([, v]) => v !== undefined && v !== '');
  const hdr = { 'x-ms-date': new Date().toUTCString(), 'x-ms-version': versions[svc] };
  for (const [k, v] of Object.entries(opts.headers || {})) if (v !== undefined && v !== '') hdr[k.toLowerCase()] = String(v);
  let body = opts.body ?? null;
  if (typeof body === 'string') body = new TextEncoder().encode(body);
  if (body !== null) {
    hdr['content-length'] = String(body.size ?? body.byteLength);
    hdr['content-type'] ||= 'application/octet-stream';
  } else if (method === 'PUT' || method === 'POST' || method === 'MERGE') {
    hdr['content-length'] = '0';
  }
  const fullPath = '/' + S.account + path;
  const sts = stringToSign(svc, method, fullPath, query, hdr);
  hdr.authorization = 'SharedKey ' + S.account + ':' + (await hmac(sts));
  const sendHdr = { ...hdr };
  delete sendHdr['content-length']; // the browser sets it from the body
  const qs = query.map(([k, v]) => enc(k) + '=' + enc(v)).join('&');
  const res = await fetch('/api/' + svc + fullPath + (qs ? '?' + qs : ''), { method, headers: sendHdr, body, cache: 'no-store' });
  if (res.status >= 400) {
    const text = method === 'HEAD' ? '' : await res.text();
    let msg = '';
    const m = /<Message>([^<]*)/.exec(text);
    if (m) msg = m[1].split('\n')[0];
    else { try { msg = JSON.parse(text)['odata.error'].message.value.split('\n')[0]; } catch (_) { msg = ''; } }
    throw new ApiError(res.status, res.headers.get('x-ms-error-code') || '', msg);
  }
  return res;
}

// inspect calls the console's own read-only endpoints (/x/{account}/...),
// signed as a Blob request to /{account}/... is.
async function inspect(path, query = {}) {
  const q = Object.entries(query).filter(([, v]) => v !== undefined && v !== '');
  const hdr = { 'x-ms-date': new Date().toUTCString(), 'x-ms-version': versions.blob };
  const fullPath = '/' + S.account + path;
  hdr.authorization = 'SharedKey ' + S.account + ':' + (await hmac(stringToSign('blob', 'GET', fullPath, q, hdr)));
  const qs = q.map(([k, v]) => enc(k) + '=' + enc(v)).join('&');
  const res = await fetch('/x' + fullPath + (qs ? '?' + qs : ''), { headers: hdr, cache: 'no-store' });
  const j = await res.json();
  if (!res.ok) throw new ApiError(res.status, j.code, j.error);
  return j;
}

const xml = async (res) => new DOMParser().parseFromString(await res.text(), 'application/xml');
const txt = (el, sel) => { const x = el.querySelector(sel); return x ? x.textContent : ''; };

// ---- views ----
const views = {};

// Blob: containers, then blobs with prefix navigation and paging.
const B = { container: '', prefix: '', marker: '', markers: [], selected: '' };
views.blob = async function (root) {
  const side = h('section', { 'aria-label': 'Containers' });
  const body = h('section', { 'aria-label': 'Blobs' });
  root.append(h('div', { class: 'cols' }, side, body));
  const name = h('input', { placeholder: 'new container', 'aria-label': 'New container name', size: 14 });
  side.append(h('h2', { text: 'Containers' }), h('form', { class: 'toolbar', onsubmit: async (e) => {
    e.preventDefault();
    try { await api('blob', 'PUT', '/' + enc(name.value), { query: { restype: 'container' } }); B.container = name.value; render(); } catch (err) { fail(err); }
  } }, name, h('button', { type: 'submit', text: 'Create' })));
  const doc = await xml(await api('blob', 'GET', '', { query: [['comp', 'list'], ['include', 'metadata']] }));
  const leasedContainers = [];
  const rows = [...doc.querySelectorAll('Container')].map((c) => {
    const n = txt(c, 'Name');
    const state = txt(c, 'LeaseState');
    const cell = h('td', {}, h('span', { class: 'tag ' + state, text: state }));
    if (state === 'leased' || state === 'breaking') leasedContainers.push([n, cell]);
    return h('tr', { class: n === B.container ? 'selected' : '', 'data-container': n },
      h('td', {}, h('button', { class: 'link', onclick: () => { B.container = n; B.prefix = ''; B.marker = ''; B.markers = []; B.selected = ''; render(); } }, n)),
      h('td', { text: txt(c, 'PublicAccess') || 'private' }),
      cell,
      h('td', { class: 'mono', text: txt(c, 'Etag') }));
  });
  side.append(table(['Name', 'Public access', 'Lease', 'ETag'], rows));
  if (S.cfg.inspector) {
    for (const [n, cell] of leasedContainers) {
      try {
        const l = await inspect('/containers/' + enc(n) + '/lease');
        if (l.expires) cell.append(h('span', { class: 'lease-expiry' }, ' until ' + fmtTime(l.expires)));
        else if (l.breakAt) cell.append(h('span', { class: 'lease-expiry' }, ' breaks at ' + fmtTime(l.breakAt)));
        else if (l.duration) cell.append(' ' + l.duration);
      } catch (_) { /* the list still shows the state */ }
    }
  }
  if (B.container) await blobList(body);
  else body.append(h('p', { class: 'muted', text: 'Choose a container.' }));
};

async function blobList(root) {
  const c = B.container;
  const crumbs = h('div', { class: 'crumbs' }, h('button', { class: 'link', onclick: () => { B.prefix = ''; B.marker = ''; B.markers = []; render(); } }, c));
  let acc = '';
  for (const part of B.prefix.split('/').filter(Boolean)) {
    acc += part + '/';
    const p = acc;
    crumbs.append(' / ', h('button', { class: 'link', onclick: () => { B.prefix = p; B.marker = ''; B.markers = []; render(); } }, part));
  }
  const file = h('input', { type: 'file', 'aria-label': 'File to upload', id: 'upload-file' });
  const dur = h('select', { 'aria-label': 'Lease duration', id: 'lease-duration' }, ['60', '30', '15', '-1'].map((d) => h('option', { value: d, text: d === '-1' ? 'infinite' : d + ' s' })));
  const size = h('select', { 'aria-label': 'Page size' }, ['50', '10', '200'].map((n) => h('option', { value: n, text: n + ' per page' })));
  size.value = B.pageSize || '50';
  size.onchange = () => { B.pageSize = size.value; B.marker = ''; B.markers = []; render(); };
  root.append(h('h2', {}, 'Blobs in ', crumbs),
    h('form', { class: 'toolbar', onsubmit: async (e) => {
      e.preventDefault();
      const f = file.files[0];
      if (!f) { status('Choose a file to upload.', true); return; }
      try {
        await api('blob', 'PUT', '/' + enc(c) + '/' + encPath(B.prefix + f.name), { body: f, headers: { 'x-ms-blob-type': 'BlockBlob', 'content-type': f.type || 'application/octet-stream' } });
        status('Uploaded ' + B.prefix + f.name);
        render(true);
      } catch (err) { fail(err); }
    } }, file, h('button', { type: 'submit', id: 'upload' }, 'Upload'), h('label', {}, 'Lease ', dur), size,
    h('button', { type: 'button', class: 'danger', onclick: async () => {
      if (!confirm('Delete container ' + c + '?')) return;
      try { await api('blob', 'DELETE', '/' + enc(c), { query: { restype: 'container' } }); B.container = ''; render(); } catch (err) { fail(err); }
    } }, 'Delete container')));
  const res = await api('blob', 'GET', '/' + enc(c), { query: [['restype', 'container'], ['comp', 'list'], ['delimiter', '/'],
    ...(B.prefix ? [['prefix', B.prefix]] : []), ...(B.marker ? [['marker', B.marker]] : []), ['maxresults', size.value],
    ['include', 'metadata,snapshots,versions,tags']] });
  const doc = await xml(res);
  const rows = [];
  for (const p of doc.querySelectorAll('BlobPrefix')) {
    const n = txt(p, 'Name');
    rows.push(h('tr', {}, h('td', {}, h('button', { class: 'link', onclick: () => { B.prefix = n; B.marker = ''; B.markers = []; render(); } }, n.slice(B.prefix.length))), h('td', { text: 'folder' }), h('td'), h('td'), h('td'), h('td'), h('td'), h('td')));
  }
  const leased = [];
  for (const b of doc.querySelectorAll('Blobs > Blob')) {
    const n = txt(b, 'Name');
    const snap = txt(b, 'Snapshot');
    const ver = txt(b, 'VersionId');
    const state = txt(b, 'LeaseState');
    const leaseCell = h('td', {}, h('span', { class: 'tag ' + state, text: state }), ' ', h('span', { class: 'muted', text: txt(b, 'LeaseDuration') }));
    if (state === 'leased' || state === 'breaking') leased.push([n, leaseCell]);
    const label = n.slice(B.prefix.length) + (snap ? ' @ snapshot ' + snap : '') + (ver && txt(b, 'IsCurrentVersion') !== 'true' ? ' @ version ' + ver : '');
    const base = !snap && !(ver && txt(b, 'IsCurrentVersion') !== 'true');
    rows.push(h('tr', { class: n === B.selected && base ? 'selected' : '', 'data-blob': n },
      h('td', {}, h('button', { class: 'link', onclick: () => { B.selected = n; render(true); } }, label)),
      h('td', { text: txt(b, 'BlobType') }),
      h('td', { class: 'num', text: fmtSize(txt(b, 'Content-Length')) }),
      h('td', { text: txt(b, 'AccessTier') }),
      h('td', { class: 'mono', text: txt(b, 'Etag') }),
      h('td', { text: fmtTime(txt(b, 'Last-Modified')) }),
      leaseCell,
      h('td', {}, base ? blobActions(c, n) : null)));
  }
  root.append(table(['Name', 'Type', 'Size', 'Tier', 'ETag', 'Last modified', 'Lease', 'Actions'], rows));
  const next = txt(doc, 'NextMarker');
  root.append(h('div', { class: 'toolbar' },
    h('button', { type: 'button', disabled: B.markers.length === 0, onclick: () => { B.marker = B.markers.pop() || ''; render(true); } }, 'Previous page'),
    h('button', { type: 'button', disabled: !next, onclick: () => { B.markers.push(B.marker); B.marker = next; render(true); } }, 'Next page')));
  if (S.cfg.inspector) {
    for (const [n, cell] of leased) {
      try {
        const l = await inspect('/containers/' + enc(c) + '/lease', { blob: n });
        if (l.expires) cell.append(h('span', { class: 'lease-expiry' }, ' until ' + fmtTime(l.expires)));
        if (l.breakAt) cell.append(h('span', { class: 'lease-expiry' }, ' breaks at ' + fmtTime(l.breakAt)));
      } catch (_) { /* the list still shows the state */ }
    }
  }
  if (B.selected) await blobDetails(root, c, B.selected);
}

function blobActions(c, n) {
  const path = '/' + enc(c) + '/' + encPath(n);
  const act = (label, fn, cls) => h('button', { type: 'button', class: cls, 'data-action': label.toLowerCase().replace(/ /g, '-'), onclick: async () => {
    try { await fn(); } catch (err) { fail(err); }
  } }, label);
  return h('div', { class: 'toolbar' },
    act('Download', async () => {
      const res = await api('blob', 'GET', path);
      const url = URL.createObjectURL(await res.blob());
      const a = h('a', { href: url, download: n.split('/').pop() });
      document.body.append(a); a.click(); a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    }),
    act('Acquire lease', async () => {
      const res = await api('blob', 'PUT', path, { query: { comp: 'lease' }, headers: { 'x-ms-lease-action': 'acquire', 'x-ms-lease-duration': $('#lease-duration').value } });
      status('Lease acquired on ' + n + ': ' + res.headers.get('x-ms-lease-id'));
      render(true);
    }),
    act('Break lease', async () => {
      await api('blob', 'PUT', path, { query: { comp: 'lease' }, headers: { 'x-ms-lease-action': 'break', 'x-ms-lease-break-period': '0' } });
      status('Lease broken on ' + n);
      render(true);
    }),
    act('Copy URL', async () => {
      // A listener on every address (0.0.0.0, [::]) is reached at the
      // host this page came from.
      const base = (S.cfg.endpoints.blob || '').replace(/\/\/(0\.0\.0\.0|\[::\])(?=:)/, '//' + location.hostname);
      const url = base + '/' + S.account + path;
      try { await navigator.clipboard.writeText(url); status('Copied ' + url); } catch (_) { status(url); }
    }),
    act('Delete', async () => {
      if (!confirm('Delete ' + n + ' and its snapshots?')) return;
      await api('blob', 'DELETE', path, { headers: { 'x-ms-delete-snapshots': 'include' } });
      status('Deleted ' + n);
      if (B.selected === n) B.selected = '';
      render(true);
    }, 'danger'));
}

async function blobDetails(root, c, n) {
  const path = '/' + enc(c) + '/' + encPath(n);
  let res;
  try { res = await api('blob', 'HEAD', path); } catch (err) { if (err.status === 404) { B.selected = ''; return; } throw err; }
  const g = (k) => res.headers.get(k) || '';
  const props = [['Name', n], ['Type', g('x-ms-blob-type')], ['Size', fmtSize(g('content-length'))], ['Content type', g('content-type')],
    ['Tier', g('x-ms-access-tier')], ['ETag', g('etag')], ['Last modified', g('last-modified')], ['Created', g('x-ms-creation-time')],
    ['Lease state', g('x-ms-lease-state')], ['Lease status', g('x-ms-lease-status')], ['Lease duration', g('x-ms-lease-duration')]];
  if (g('x-ms-version-id')) props.push(['Version', g('x-ms-version-id')]);
  const meta = [];
  res.headers.forEach((v, k) => { if (k.startsWith('x-ms-meta-')) meta.push([k.slice(10), v]); });
  let tags = [];
  try {
    const t = await xml(await api('blob', 'GET', path, { query: { comp: 'tags' } }));
    tags = [...t.querySelectorAll('Tag')].map((x) => [txt(x, 'Key'), txt(x, 'Value')]);
  } catch (_) { tags = []; }
  const dl = (pairs) => h('dl', { class: 'props' }, pairs.flatMap(([k, v]) => [h('dt', { text: k }), h('dd', { text: v })]));
  root.append(h('div', { class: 'panel', id: 'blob-details' }, h('h3', { text: 'Properties of ' + n }), dl(props),
    h('h3', { text: 'Metadata' }), meta.length ? dl(meta) : h('p', { class: 'muted', text: 'none' }),
    h('h3', { text: 'Tags' }), tags.length ? dl(tags) : h('p', { class: 'muted', text: 'none' })));
}

// Queue: queues, their messages (invisible ones too), peek, put, clear.
const Q = { queue: '' };
views.queue = async function (root) {
  const side = h('section', { 'aria-label': 'Queues' });
  const body = h('section', { 'aria-label': 'Messages' });
  root.append(h('div', { class: 'cols' }, side, body));
  const name = h('input', { placeholder: 'new queue', 'aria-label': 'New queue name', size: 14 });
  side.append(h('h2', { text: 'Queues' }), h('form', { class: 'toolbar', onsubmit: async (e) => {
    e.preventDefault();
    try { await api('queue', 'PUT', '/' + enc(name.value)); Q.queue = name.value; render(); } catch (err) { fail(err); }
  } }, name, h('button', { type: 'submit', text: 'Create' })));
  const doc = await xml(await api('queue', 'GET', '', { query: { comp: 'list' } }));
  side.append(table(['Name'], [...doc.querySelectorAll('Queue')].map((q) => {
    const n = txt(q, 'Name');
    return h('tr', { class: n === Q.queue ? 'selected' : '' }, h('td', {}, h('button', { class: 'link', onclick: () => { Q.queue = n; Q.peeked = null; render(); } }, n)));
  })));
  if (!Q.queue) { body.append(h('p', { class: 'muted', text: 'Choose a queue.' })); return; }
  const q = '/' + enc(Q.queue);
  const text = h('input', { placeholder: 'message text', 'aria-label': 'Message text', size: 24 });
  const vis = h('input', { 'aria-label': 'Visibility timeout (s)', placeholder: 'invisible for (s)', size: 8 });
  body.append(h('h2', { text: 'Messages in ' + Q.queue }),
    h('form', { class: 'toolbar', onsubmit: async (e) => {
      e.preventDefault();
      const esc = text.value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
      try {
        await api('queue', 'POST', q + '/messages', { query: { visibilitytimeout: vis.value }, body: '<QueueMessage><MessageText>' + esc + '</MessageText></QueueMessage>', headers: { 'content-type': 'application/xml' } });
        status('Message put'); render(true);
      } catch (err) { fail(err); }
    } }, text, vis, h('button', { type: 'submit' }, 'Put message'),
    h('button', { type: 'button', onclick: async () => {
      try {
        const d = await xml(await api('queue', 'GET', q + '/messages', { query: { peekonly: 'true', numofmessages: '32' } }));
        Q.peeked = [...d.querySelectorAll('QueueMessage')].map((m) => ({ id: txt(m, 'MessageId'), text: txt(m, 'MessageText'), dequeueCount: txt(m, 'DequeueCount'), inserted: txt(m, 'InsertionTime'), expires: txt(m, 'ExpirationTime') }));
        render(true);
      } catch (err) { fail(err); }
    } }, 'Peek'),
    h('button', { type: 'button', class: 'danger', onclick: async () => {
      if (!confirm('Delete every message of ' + Q.queue + '?')) return;
      try { await api('queue', 'DELETE', q + '/messages'); status('Queue cleared'); render(true); } catch (err) { fail(err); }
    } }, 'Clear'),
    h('button', { type: 'button', class: 'danger', onclick: async () => {
      if (!confirm('Delete queue ' + Q.queue + '?')) return;
      try { await api('queue', 'DELETE', q); Q.queue = ''; render(); } catch (err) { fail(err); }
    } }, 'Delete queue')));
  if (S.cfg.inspector) {
    const j = await inspect('/queues/' + enc(Q.queue) + '/messages');
    body.append(table(['Id', 'Text', 'State', 'Next visible', 'Dequeues', 'Pop receipt', 'Inserted', 'Expires'], j.messages.map((m) => h('tr', { 'data-message': m.id },
      h('td', { class: 'mono', text: m.id }), h('td', { text: m.text }),
      h('td', {}, h('span', { class: 'tag ' + (m.visible ? '' : 'invisible'), text: m.visible ? 'visible' : 'invisible' })),
      h('td', { text: fmtTime(m.nextVisible) }), h('td', { class: 'num', text: m.dequeueCount }),
      h('td', { text: m.receiptOutstanding ? 'outstanding' : '' }),
      h('td', { text: fmtTime(m.inserted) }), h('td', { text: fmtTime(m.expires) }))), 'All messages, invisible ones included (' + j.messages.length + ')'));
  }
  if (Q.peeked) {
    body.append(h('h3', { text: 'Peeked (visible) messages' }), table(['Id', 'Text', 'Dequeues', 'Inserted', 'Expires'], Q.peeked.map((m) => h('tr', {},
      h('td', { class: 'mono', text: m.id }), h('td', { text: m.text }), h('td', { class: 'num', text: m.dequeueCount }), h('td', { text: m.inserted }), h('td', { text: m.expires })))));
  }
};

// Table: tables, a query with $filter/$select/$top and paging, entities
// with types and ETags, insert, edit (If-Match) and delete.
const T = { table: '', filter: '', select: '', top: '20', next: null, pages: [], editing: null };
const tableJSON = { accept: 'application/json;odata=minimalmetadata', 'content-type': 'application/json', dataserviceversion: '3.0' };
function entityPath(e) {
  const k = (v) => "'" + enc(String(v).replace(/'/g, "''")) + "'";
  return '/' + enc(T.table) + '(PartitionKey=' + k(e.PartitionKey) + ',RowKey=' + k(e.RowKey) + ')';
}
function typeOf(e, k) {
  const t = e[k + '@odata.type'];
  if (t) return t.replace('Edm.', '');
  const v = e[k];
  if (typeof v === 'boolean') return 'Boolean';
  if (typeof v === 'number') return Number.isInteger(v) ? 'Int32' : 'Double';
  return 'String';
}
views.table = async function (root) {
  const side = h('section', { 'aria-label': 'Tables' });
  const body = h('section', { 'aria-label': 'Entities' });
  root.append(h('div', { class: 'cols' }, side, body));
  const name = h('input', { placeholder: 'new table', 'aria-label': 'New table name', size: 14 });
  side.append(h('h2', { text: 'Tables' }), h('form', { class: 'toolbar', onsubmit: async (e) => {
    e.preventDefault();
    try { await api('table', 'POST', '/Tables', { headers: { ...tableJSON, prefer: 'return-no-content' }, body: JSON.stringify({ TableName: name.value }) }); T.table = name.value; render(); } catch (err) { fail(err); }
  } }, name, h('button', { type: 'submit', text: 'Create' })));
  const list = await (await api('table', 'GET', '/Tables', { headers: { accept: 'application/json;odata=nometadata' } })).json();
  side.append(table(['Name'], list.value.map((t) => h('tr', { class: t.TableName === T.table ? 'selected' : '' },
    h('td', {}, h('button', { class: 'link', onclick: () => { T.table = t.TableName; T.next = null; T.pages = []; T.editing = null; render(); } }, t.TableName))))));
  if (!T.table) { body.append(h('p', { class: 'muted', text: 'Choose a table.' })); return; }
  const filter = h('input', { id: 'q-filter', value: T.filter, placeholder: "PartitionKey eq 'p1'", size: 30, 'aria-label': '$filter' });
  const select = h('input', { id: 'q-select', value: T.select, placeholder: 'RowKey,Name', size: 14, 'aria-label': '$select' });
  const top = h('input', { id: 'q-top', value: T.top, size: 4, 'aria-label': '$top' });
  body.append(h('h2', { text: 'Entities in ' + T.table }),
    h('form', { class: 'toolbar', onsubmit: (e) => { e.preventDefault(); T.filter = filter.value; T.select = select.value; T.top = top.value; T.next = null; T.pages = []; render(true); } },
      h('label', {}, '$filter ', filter), h('label', {}, '$select ', select), h('label', {}, '$top ', top), h('button', { type: 'submit', id: 'q-run' }, 'Query'),
      h('button', { type: 'button', onclick: () => { T.editing = { insert: true }; render(true); } }, 'Insert entity'),
      h('button', { type: 'button', class: 'danger', onclick: async () => {
        if (!confirm('Delete table ' + T.table + '?')) return;
        try { await api('table', 'DELETE', "/Tables('" + enc(T.table) + "')", { headers: tableJSON }); T.table = ''; render(); } catch (err) { fail(err); }
      } }, 'Delete table')));
  if (T.editing) body.append(entityEditor());
  const cur = T.next || {};
  const res = await api('table', 'GET', '/' + enc(T.table) + '()', { headers: { accept: tableJSON.accept, dataserviceversion: '3.0' },
    query: { $filter: T.filter, $select: T.select, $top: T.top, NextPartitionKey: cur.pk, NextRowKey: cur.rk } });
  const nextPK = res.headers.get('x-ms-continuation-NextPartitionKey');
  const nextRK = res.headers.get('x-ms-continuation-NextRowKey');
  const ents = (await res.json()).value;
  const cols = [];
  for (const e of ents) for (const k of Object.keys(e)) if (!k.includes('@') && !k.startsWith('odata.') && !['PartitionKey', 'RowKey', 'Timestamp'].includes(k) && !cols.includes(k)) cols.push(k);
  body.append(table(['PartitionKey', 'RowKey', 'Timestamp', 'ETag', ...cols, 'Actions'], ents.map((e) => h('tr', { 'data-entity': e.PartitionKey + '/' + e.RowKey },
    h('td', { text: e.PartitionKey }), h('td', { text: e.RowKey }), h('td', { text: fmtTime(e.Timestamp) }),
    h('td', { class: 'mono', text: e['odata.etag'] || '' }),
    cols.map((k) => h('td', {}, k in e ? [String(e[k]), ' ', h('span', { class: 'tag', text: typeOf(e, k) })] : '')),
    h('td', {}, !('PartitionKey' in e && 'RowKey' in e) ? h('span', { class: 'muted', text: 'select PartitionKey and RowKey to edit' }) : h('div', { class: 'toolbar' },
      h('button', { type: 'button', 'data-action': 'edit', onclick: () => { T.editing = { entity: e }; render(true); } }, 'Edit'),
      h('button', { type: 'button', class: 'danger', onclick: async () => {
        if (!confirm('Delete ' + e.PartitionKey + '/' + e.RowKey + '?')) return;
        try { await api('table', 'DELETE', entityPath(e), { headers: { ...tableJSON, 'if-match': e['odata.etag'] || '*' } }); status('Deleted'); render(true); } catch (err) { fail(err); }
      } }, 'Delete')))))));
  body.append(h('div', { class: 'toolbar' },
    h('button', { type: 'button', disabled: T.pages.length === 0, onclick: () => { T.next = T.pages.pop() || null; render(true); } }, 'Previous page'),
    h('button', { type: 'button', disabled: !nextPK, onclick: () => { T.pages.push(T.next); T.next = { pk: nextPK, rk: nextRK || '' }; render(true); } }, 'Next page')));
};

function entityEditor() {
  const e = T.editing.entity;
  const props = {};
  if (e) for (const [k, v] of Object.entries(e)) if (!k.startsWith('odata.') && k !== 'Timestamp' && k !== 'Timestamp@odata.type') props[k] = v;
  const area = h('textarea', { id: 'entity-json', 'aria-label': 'Entity as JSON' });
  area.value = JSON.stringify(e ? props : { PartitionKey: '', RowKey: '' }, null, 2);
  const etag = e ? e['odata.etag'] : '';
  return h('form', { class: 'panel', onsubmit: async (ev) => {
    ev.preventDefault();
    let val;
    try { val = JSON.parse(area.value); } catch (err) { status('Not JSON: ' + err.message, true); return; }
    try {
      if (e) await api('table', 'PUT', entityPath(e), { headers: { ...tableJSON, 'if-match': etag }, body: JSON.stringify(val) });
      else await api('table', 'POST', '/' + enc(T.table), { headers: { ...tableJSON, prefer: 'return-no-content' }, body: JSON.stringify(val) });
      status(e ? 'Entity replaced' : 'Entity inserted');
      T.editing = null;
      render(true);
    } catch (err) { fail(err); }
  } }, h('h3', { text: e ? 'Edit ' + e.PartitionKey + ' / ' + e.RowKey + ' (If-Match: ' + etag + ')' : 'Insert entity' }),
  h('p', { class: 'muted', text: 'Types as OData annotations, e.g. "Count": "5", "Count@odata.type": "Edm.Int64".' }),
  area, h('div', { class: 'toolbar' }, h('button', { type: 'submit', id: 'entity-save' }, 'Save'), h('button', { type: 'button', onclick: () => { T.editing = null; render(true); } }, 'Cancel')));
}

// File: shares, directories and files, the handles open on a share.
const F = { share: '', dir: '' };
views.file = async function (root) {
  const side = h('section', { 'aria-label': 'Shares' });
  const body = h('section', { 'aria-label': 'Files' });
  root.append(h('div', { class: 'cols' }, side, body));
  const doc = await xml(await api('file', 'GET', '', { query: { comp: 'list' } }));
  side.append(h('h2', { text: 'Shares' }), table(['Name', 'Quota (GiB)'], [...doc.querySelectorAll('Share')].map((s) => {
    const n = txt(s, 'Name');
    return h('tr', { class: n === F.share ? 'selected' : '' }, h('td', {}, h('button', { class: 'link', onclick: () => { F.share = n; F.dir = ''; render(); } }, n)), h('td', { class: 'num', text: txt(s, 'Quota') }));
  })));
  if (!F.share) { body.append(h('p', { class: 'muted', text: 'Choose a share.' })); return; }
  const crumbs = h('div', { class: 'crumbs' }, h('button', { class: 'link', onclick: () => { F.dir = ''; render(); } }, F.share));
  let acc = '';
  for (const part of F.dir.split('/').filter(Boolean)) {
    acc += (acc ? '/' : '') + part;
    const p = acc;
    crumbs.append(' / ', h('button', { class: 'link', onclick: () => { F.dir = p; render(); } }, part));
  }
  body.append(h('h2', {}, 'Files in ', crumbs));
  const dpath = '/' + enc(F.share) + (F.dir ? '/' + encPath(F.dir) : '');
  const d = await xml(await api('file', 'GET', dpath, { query: [['restype', 'directory'], ['comp', 'list'], ['include', 'Timestamps,ETag,Attributes']] }));
  const rows = [];
  for (const x of d.querySelectorAll('Directory')) {
    const n = txt(x, 'Name');
    rows.push(h('tr', {}, h('td', {}, h('button', { class: 'link', onclick: () => { F.dir = (F.dir ? F.dir + '/' : '') + n; render(); } }, n + '/')), h('td', { text: 'directory' }), h('td'), h('td', { text: fmtTime(txt(x, 'LastWriteTime')) })));
  }
  for (const x of d.querySelectorAll('File')) {
    rows.push(h('tr', {}, h('td', { text: txt(x, 'Name') }), h('td', { text: 'file' }), h('td', { class: 'num', text: fmtSize(txt(x, 'Content-Length')) }), h('td', { text: fmtTime(txt(x, 'LastWriteTime')) })));
  }
  body.append(table(['Name', 'Kind', 'Size', 'Last written'], rows));
  if (!S.cfg.inspector) return;
  const j = await inspect('/shares/' + enc(F.share) + '/handles');
  const lock = (l) => (l.exclusive ? 'exclusive' : 'shared') + ' ' + l.offset + '+' + l.length;
  body.append(h('h3', { text: 'Open handles (SMB and REST)' }), table(['Path', 'Handle', 'Client', 'Opened', 'Access', 'Share mode', 'Byte-range locks', 'Delete', ''], j.handles.map((x) => h('tr', { 'data-handle': x.handleId, 'data-path': x.path },
    h('td', { text: x.path || '/' }), h('td', { class: 'mono', text: x.handleId }), h('td', { text: x.client }), h('td', { text: fmtTime(x.opened) }),
    h('td', { text: x.access }), h('td', { class: 'share-mode', text: x.shareMode }),
    h('td', { class: 'locks' }, (x.locks || []).map((l) => h('div', { class: 'mono', text: lock(l) }))),
    h('td', { class: 'delete-state', text: [x.deletePending ? 'delete pending' : '', x.deleteOnClose ? 'on close' : ''].filter(Boolean).join(', ') }),
    h('td', {}, h('button', { type: 'button', class: 'danger', onclick: async () => {
      try {
        await api('file', 'PUT', '/' + enc(F.share) + (x.path ? '/' + encPath(x.path) : ''), { query: { comp: 'forceclosehandles' }, headers: { 'x-ms-handle-id': x.handleId } });
        status('Closed handle ' + x.handleId); render(true);
      } catch (err) { fail(err); }
    } }, 'Force close'))))));
};

// Data Lake: filesystems, directories and files of a hierarchical
// account with owner, group, permissions, and a path's ACL.
const D = { fs: '', dir: '', cont: '', conts: [], acl: null };
views.dfs = async function (root) {
  const side = h('section', { 'aria-label': 'Filesystems' });
  const body = h('section', { 'aria-label': 'Paths' });
  root.append(h('div', { class: 'cols' }, side, body));
  const list = await (await api('dfs', 'GET', '', { query: { resource: 'account' } })).json();
  side.append(h('h2', { text: 'Filesystems' }), table(['Name', 'Last modified'], (list.filesystems || []).map((f) => h('tr', { class: f.name === D.fs ? 'selected' : '' },
    h('td', {}, h('button', { class: 'link', onclick: () => { D.fs = f.name; D.dir = ''; D.cont = ''; D.conts = []; D.acl = null; render(); } }, f.name)), h('td', { text: f.lastModified || '' })))));
  if (!D.fs) { body.append(h('p', { class: 'muted', text: 'Choose a filesystem.' })); return; }
  const crumbs = h('div', { class: 'crumbs' }, h('button', { class: 'link', onclick: () => { D.dir = ''; D.cont = ''; D.conts = []; D.acl = null; render(); } }, D.fs));
  let acc = '';
  for (const part of D.dir.split('/').filter(Boolean)) {
    acc += (acc ? '/' : '') + part;
    const p = acc;
    crumbs.append(' / ', h('button', { class: 'link', onclick: () => { D.dir = p; D.cont = ''; D.conts = []; D.acl = null; render(); } }, part));
  }
  body.append(h('h2', {}, 'Paths in ', crumbs));
  const res = await api('dfs', 'GET', '/' + enc(D.fs), { query: { resource: 'filesystem', recursive: 'false', directory: D.dir, maxResults: '100', continuation: D.cont } });
  const next = res.headers.get('x-ms-continuation');
  const paths = (await res.json()).paths || [];
  body.append(table(['Name', 'Kind', 'Size', 'Owner', 'Group', 'Permissions', 'Last modified', ''], paths.map((p) => {
    const dir = String(p.isDirectory) === 'true';
    const short = p.name.slice(D.dir ? D.dir.length + 1 : 0);
    return h('tr', { 'data-path': p.name },
      h('td', {}, dir ? h('button', { class: 'link', onclick: () => { D.dir = p.name; D.cont = ''; D.conts = []; D.acl = null; render(); } }, short + '/') : short),
      h('td', { text: dir ? 'directory' : 'file' }), h('td', { class: 'num', text: dir ? '' : fmtSize(p.contentLength || 0) }),
      h('td', { text: p.owner || '' }), h('td', { text: p.group || '' }), h('td', { class: 'mono', text: p.permissions || '' }),
      h('td', { text: p.lastModified || '' }),
      h('td', {}, h('button', { type: 'button', onclick: async () => {
        try {
          const r = await api('dfs', 'HEAD', '/' + enc(D.fs) + '/' + encPath(p.name), { query: { action: 'getAccessControl' } });
          D.acl = { path: p.name, owner: r.headers.get('x-ms-owner'), group: r.headers.get('x-ms-group'), permissions: r.headers.get('x-ms-permissions'), acl: r.headers.get('x-ms-acl') };
          render(true);
        } catch (err) { fail(err); }
      } }, 'ACL')));
  })));
  body.append(h('div', { class: 'toolbar' },
    h('button', { type: 'button', disabled: D.conts.length === 0, onclick: () => { D.cont = D.conts.pop() || ''; render(true); } }, 'Previous page'),
    h('button', { type: 'button', disabled: !next, onclick: () => { D.conts.push(D.cont); D.cont = next; render(true); } }, 'Next page')));
  if (D.acl) {
    body.append(h('div', { class: 'panel', id: 'acl' }, h('h3', { text: 'Access control of ' + D.acl.path }),
      h('dl', { class: 'props' }, [['Owner', D.acl.owner], ['Group', D.acl.group], ['Permissions', D.acl.permissions]].flatMap(([k, v]) => [h('dt', { text: k }), h('dd', { text: v || '' })])),
      table(['ACL entry'], (D.acl.acl || '').split(',').filter(Boolean).map((x) => h('tr', {}, h('td', { class: 'mono', text: x }))))));
  }
};

// Changes: the account's change log (the blob change feed's records),
// newest first.
views.changes = async function (root) {
  if (S.cfg.events) await eventSubscriptions(root);
  const j = await inspect('/changes', { n: '200' });
  if (!j.on) {
    root.append(h('p', { class: 'muted', text: 'The blob change feed is off for this account (cerulean serve --blob-change-feed, or name:key:changefeed in --accounts).' }));
    S.timer = setTimeout(() => { if (S.view === 'changes' && !document.hidden) render(true); }, 3000);
    return;
  }
  root.append(h('h2', { text: 'Last changes (the $blobchangefeed container serves them as Avro)' }),
    j.changes.length ? table(['#', 'Time', 'Event', 'Subject', 'API', 'ETag', 'Size', 'Blob type', 'Request id'], j.changes.map((c) => h('tr', { 'data-seq': c.seq },
      h('td', { class: 'num', text: c.seq }), h('td', { text: fmtTime(c.time) }), h('td', { class: 'event', text: c.type }),
      h('td', { class: 'mono subject', text: c.subject }), h('td', { text: c.api }), h('td', { class: 'mono', text: c.etag || '' }),
      h('td', { class: 'num', text: fmtSize(c.contentLength) }), h('td', { text: c.blobType || '' }), h('td', { class: 'mono', text: c.requestId || '' }))))
      : h('p', { class: 'muted', text: 'No change recorded yet.' }));
  S.timer = setTimeout(() => { if (S.view === 'changes' && !document.hidden) render(true); }, 3000);
};

// eventSubscriptions lists the account's blob event subscriptions with
// their delivery state (the admin endpoint GET /.cerulean/events).
async function eventSubscriptions(root) {
  const res = await fetch('/.cerulean/events', { cache: 'no-store' });
  if (!res.ok) return;
  const subs = ((await res.json()).subscriptions || []).filter((s) => s.account === S.account);
  if (!subs.length) return;
  root.append(h('h2', { text: 'Event subscriptions' }),
    table(['Name', 'Destination', 'Schema', 'Delivered up to', 'Waiting', 'Validated', 'Delivering here', 'Delivered', 'Dead-lettered', 'Failures', 'Last error'], subs.map((s) => h('tr', { 'data-subscription': s.name },
      h('td', { text: s.name }), h('td', { class: 'mono', text: s.endpoint.type + ' ' + (s.endpoint.url || s.endpoint.queueName || '') }),
      h('td', { text: s.eventDeliverySchema || 'EventGridSchema' }), h('td', { class: 'num', text: s.position }),
      h('td', { class: 'num', text: Math.max(0, s.logLast - s.position) }), h('td', { class: 'validated', text: s.validated ? 'validated' : 'not yet' }),
      h('td', { text: s.mine ? 'yes' : (s.leaseHolder ? 'another front end' : 'no') }), h('td', { class: 'num delivered', text: s.process.delivered }),
      h('td', { class: 'num', text: s.process.deadLettered }), h('td', { class: 'num', text: s.process.failures }),
      h('td', { class: 'mono', text: s.process.lastError || '' })))));
}

// Activity: the last requests answered for this account, and the
// request rate of each operation over them.
views.activity = async function (root) {
  const j = await inspect('/activity', { n: '200' });
  const reqs = j.requests;
  // Request rates per operation from the server's metrics
  // (cerulean_requests_total of every account), between this render
  // and the previous one.
  let rates = null;
  try {
    const m = await inspect('/rates');
    const t = new Date(m.time).getTime();
    if (S.lastCounts && t > S.lastCounts.t) {
      const dt = (t - S.lastCounts.t) / 1000;
      rates = Object.entries(m.counts).map(([op, n]) => [op, (n - (S.lastCounts.counts[op] || 0)) / dt]).filter(([, r]) => r > 0);
    }
    S.lastCounts = { t, counts: m.counts };
  } catch (_) { /* no metrics */ }
  root.append(h('h2', { text: 'Requests per second, by operation (the server\'s metrics, every account)' }));
  if (!rates) root.append(h('p', { class: 'muted', text: 'Measuring: rates appear at the next refresh.' }));
  else {
    const ops = rates.sort((a, b) => b[1] - a[1]).slice(0, 12);
    const max = Math.max(0.001, ...ops.map(([, n]) => n));
    root.append(ops.length ? h('div', { class: 'bars', role: 'list' }, ops.flatMap(([op, n]) => [h('span', { role: 'listitem', class: 'rate-op', text: op }), h('div', { class: 'bar', style: 'width:' + (100 * n / max) + '%' }), h('span', { class: 'num', text: n.toFixed(1) + '/s' })]))
      : h('p', { class: 'muted', text: 'No requests since the last refresh.' }));
  }
  root.append(
    h('h2', { text: 'Last requests' }),
    table(['Time', 'Service', 'Operation', 'Status', 'Error code', 'Duration', 'Request id', 'Client', 'URL'], reqs.map((r) => h('tr', { 'data-request': r.requestId },
      h('td', { text: fmtTime(r.time) }), h('td', { text: r.service }), h('td', { class: 'op', text: r.operation || '(unrouted)' }),
      h('td', {}, h('span', { class: 'tag ' + (r.status >= 400 ? 'err' : ''), text: r.status })), h('td', { text: r.errorCode || '' }),
      h('td', { class: 'num', text: r.durationMs.toFixed(1) + ' ms' }), h('td', { class: 'mono', text: r.requestId }), h('td', { text: r.client }),
      h('td', { class: 'mono', text: r.method + ' ' + r.url })))));
  S.timer = setTimeout(() => { if (S.view === 'activity' && !document.hidden) render(true); }, 3000);
};

// ---- shell ----
let rendering = 0;
async function render(keepStatus) {
  clearTimeout(S.timer);
  const seq = ++rendering;
  const root = h('div', {});
  if (!keepStatus) status('');
  for (const b of document.querySelectorAll('#tabs button')) {
    if (b.dataset.view === S.view) b.setAttribute('aria-current', 'page'); else b.removeAttribute('aria-current');
  }
  try {
    if (!S.account || !S.key) root.append(h('p', {}, 'Enter an account name and one of its keys above.'));
    else await views[S.view](root);
  } catch (err) { fail(err); }
  if (seq !== rendering) return; // a newer render won
  $('#view').replaceChildren(root);
  document.body.dataset.ready = S.view;
  if (S.cfg && S.cfg.clockControl) refreshClock();
}

async function refreshClock() {
  try {
    const st = await (await fetch('/.cerulean/clock', { cache: 'no-store' })).json();
    $('#clock-state').textContent = 'Server time ' + fmtTime(st.now) + ' (offset ' + st.offset + ')';
  } catch (err) { $('#clock-state').textContent = 'clock: ' + err.message; }
}

async function main() {
  S.cfg = await (await fetch('config.json', { cache: 'no-store' })).json();
  for (const a of S.cfg.accounts || []) $('#accounts').append(h('option', { value: a }));
  const saved = sessionStorage.getItem('cerulean-account');
  if (S.cfg.dev) { $('#account').value = S.cfg.dev.account; $('#key').value = S.cfg.dev.key; }
  if (saved && (!S.cfg.dev || saved !== S.cfg.dev.account)) { $('#account').value = saved; $('#key').value = ''; }
  const use = () => {
    const acct = $('#account').value.trim();
    if (acct !== S.account) { // another account: nothing selected
      B.container = ''; B.prefix = ''; B.marker = ''; B.markers = []; B.selected = '';
      Q.queue = ''; Q.peeked = null; T.table = ''; T.next = null; T.pages = []; T.editing = null;
      F.share = ''; F.dir = ''; D.fs = ''; D.dir = ''; D.cont = ''; D.conts = []; D.acl = null;
    }
    S.account = acct; S.key = $('#key').value.trim(); S.cryptoKey = null;
    sessionStorage.setItem('cerulean-account', S.account);
  };
  if ($('#account').value && $('#key').value) use();
  $('#signin').addEventListener('submit', (e) => { e.preventDefault(); use(); render(); });
  for (const b of document.querySelectorAll('#tabs button')) {
    b.hidden = b.dataset.view !== 'activity' && !S.cfg.services.includes(b.dataset.view === 'changes' ? 'blob' : b.dataset.view);
    b.addEventListener('click', () => { S.view = b.dataset.view; location.hash = S.view; render(); });
  }
  // Arrow keys move between the tabs.
  $('#tabs').addEventListener('keydown', (e) => {
    if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
    const bs = [...document.querySelectorAll('#tabs button:not([hidden])')];
    const i = bs.indexOf(document.activeElement);
    if (i < 0) return;
    bs[(i + (e.key === 'ArrowRight' ? 1 : bs.length - 1)) % bs.length].focus();
  });
  if (S.cfg.clockControl) {
    $('#clock').hidden = false;
    $('#clock-form').addEventListener('submit', async (e) => {
      e.preventDefault();
      const res = await fetch('/.cerulean/clock/advance?by=' + enc($('#clock-by').value), { method: 'POST' });
      const j = await res.json();
      if (!res.ok) status(j.error, true); else { status('Clock advanced to ' + fmtTime(j.now)); render(true); }
    });
  }
  const fromHash = location.hash.slice(1);
  if (views[fromHash]) S.view = fromHash;
  render();
}
main().catch(fail);
