// The tablebridge data browser: plain JavaScript over the Table REST API of
// the server that serves it, authorized by account SAS tokens (see
// internal/databrowser/doc.go). Table data is only ever set as text
// (textContent, input values), never parsed as HTML.
'use strict';

const PAGE_SIZE = 50;
const TYPES = ['Edm.String', 'Edm.Int32', 'Edm.Int64', 'Edm.Double', 'Edm.Boolean', 'Edm.DateTime', 'Edm.Guid', 'Edm.Binary'];
const SYSTEM = ['PartitionKey', 'RowKey', 'Timestamp'];
const $ = (id) => document.getElementById(id);

const state = {
  accounts: {},   // name -> SAS query string
  account: null,  // selected account
  table: null,    // selected table
  filter: '',
  next: null,     // continuation of the next page
  pages: 0,
  entity: null,   // the entity being edited (null: a new one)
};

// Loads are numbered: an answer is shown only if no later load of its kind
// started and no other table (or none) was shown since it was asked for,
// so a slow page or entity never replaces a newer one or an action's
// message. With no table shown (deleted while an action's follow-up loads
// were pending) there is nothing to load.
const loads = { page: 0, entity: 0 };

function showTable(name) {
  state.table = name;
  loads.page++;
  loads.entity++;
}

// --- accounts: from the link's fragment, kept for this tab only ---
function loadAccounts() {
  const saved = sessionStorage.getItem('tablebridge.accounts');
  if (saved) state.accounts = JSON.parse(saved);
  if (location.hash.length > 1) {
    for (const [name, sas] of new URLSearchParams(location.hash.slice(1))) state.accounts[name] = sas;
    saveAccounts();
    // Out of the address bar, the history and any screenshot.
    history.replaceState(null, '', location.pathname);
  }
}
function saveAccounts() { sessionStorage.setItem('tablebridge.accounts', JSON.stringify(state.accounts)); }

function setStatus(text, error) {
  const s = $('status');
  s.textContent = text;
  s.className = error ? 'error' : '';
}

// --- the REST API ---
async function api(method, path, { query = {}, body, headers = {} } = {}) {
  const qs = new URLSearchParams(query).toString();
  const sas = state.accounts[state.account];
  const url = '/' + encodeURIComponent(state.account) + '/' + path + '?' + (qs ? qs + '&' : '') + sas;
  const h = { 'Accept': 'application/json;odata=fullmetadata', 'x-ms-version': '2019-02-02', 'DataServiceVersion': '3.0', ...headers };
  if (body !== undefined) h['Content-Type'] = 'application/json';
  const resp = await fetch(url, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
  if (!resp.ok) {
    const text = await resp.text();
    let msg = text;
    try { msg = JSON.parse(text)['odata.error'].message.value.split('\n')[0]; } catch (e) { /* not JSON */ }
    throw new Error(resp.status + ' ' + (resp.headers.get('x-ms-error-code') || '') + ': ' + msg);
  }
  return resp;
}

// parseTyped parses an entity list or entity, keeping what JSON.parse loses:
// whether a number was written as an integer (Edm.Int32) or with a fraction
// or exponent (Edm.Double), from its source text where the browser gives it.
function parseTyped(text) {
  const raw = new Map();
  const obj = JSON.parse(text, function (key, value, ctx) {
    if (typeof value === 'number' && ctx && ctx.source !== undefined) raw.set(this, { ...(raw.get(this) || {}), [key]: ctx.source });
    return value;
  });
  return { obj, raw };
}

// typedProperties returns [name, type, value] of an entity read with full
// metadata: annotated types as given, the others as JSON tells them.
function typedProperties(e, raw) {
  const out = [];
  for (const [name, value] of Object.entries(e)) {
    if (name.startsWith('odata.') || name.includes('@odata.')) continue;
    let type = e[name + '@odata.type'];
    if (!type) {
      if (typeof value === 'boolean') type = 'Edm.Boolean';
      else if (typeof value === 'number') {
        const src = (raw.get(e) || {})[name];
        type = src !== undefined ? (/[.eE]/.test(src) ? 'Edm.Double' : 'Edm.Int32') : (Number.isInteger(value) ? 'Edm.Int32' : 'Edm.Double');
      } else type = 'Edm.String';
    }
    out.push([name, type, value]);
  }
  return out;
}

// --- accounts and tables ---
function renderAccounts() {
  const ul = $('accounts');
  ul.replaceChildren();
  for (const name of Object.keys(state.accounts)) {
    const li = document.createElement('li');
    li.textContent = name;
    li.className = name === state.account ? 'selected' : '';
    li.onclick = () => selectAccount(name);
    ul.append(li);
  }
  $('empty').hidden = Object.keys(state.accounts).length > 0;
}

async function selectAccount(name) {
  state.account = name;
  showTable(null);
  $('table-view').hidden = true;
  $('entity-view').hidden = true;
  renderAccounts();
  await loadTables();
}

async function loadTables() {
  const ul = $('tables');
  ul.replaceChildren();
  try {
    let next = null;
    do {
      const query = next ? { NextTableName: next } : {};
      const resp = await api('GET', 'Tables', { query });
      const { obj } = parseTyped(await resp.text());
      for (const t of obj.value) {
        const li = document.createElement('li');
        li.textContent = t.TableName;
        li.dataset.table = t.TableName;
        li.className = t.TableName === state.table ? 'selected' : '';
        li.onclick = () => selectTable(t.TableName);
        ul.append(li);
      }
      next = resp.headers.get('x-ms-continuation-NextTableName');
    } while (next);
    setStatus(ul.children.length + ' tables in ' + state.account);
  } catch (e) { setStatus(e.message, true); }
}

async function createTable() {
  const name = $('new-table').value.trim();
  if (!name) return;
  try {
    await api('POST', 'Tables', { body: { TableName: name }, headers: { Prefer: 'return-no-content' } });
    $('new-table').value = '';
    await loadTables();
    setStatus('created table ' + name);
  } catch (e) { setStatus(e.message, true); }
}

async function deleteTable() {
  if (!confirm('Delete table ' + state.table + ' and all its entities?')) return;
  try {
    await api('DELETE', "Tables('" + encodeURIComponent(state.table) + "')");
    const name = state.table;
    showTable(null);
    $('table-view').hidden = true;
    $('entity-view').hidden = true;
    await loadTables();
    setStatus('deleted table ' + name);
  } catch (e) { setStatus(e.message, true); }
}

// --- entities ---
async function selectTable(name) {
  showTable(name);
  state.filter = $('filter').value = '';
  $('table-name').textContent = name;
  $('table-view').hidden = false;
  $('entity-view').hidden = true;
  for (const li of $('tables').children) li.className = li.dataset.table === name ? 'selected' : '';
  renderAccounts();
  await loadPage(null);
}

async function loadPage(cont) {
  if (state.table === null) return; // the table was deleted, or another account chosen
  const query = { '$top': String(PAGE_SIZE) };
  if (state.filter) query['$filter'] = state.filter;
  if (cont) { query.NextPartitionKey = cont.pk; if (cont.rk !== null) query.NextRowKey = cont.rk; }
  const seq = ++loads.page;
  try {
    const resp = await api('GET', encodeURIComponent(state.table) + '()', { query });
    const { obj, raw } = parseTyped(await resp.text());
    if (seq !== loads.page) return;
    const pk = resp.headers.get('x-ms-continuation-NextPartitionKey');
    state.next = pk !== null ? { pk, rk: resp.headers.get('x-ms-continuation-NextRowKey') } : null;
    state.pages = cont ? state.pages + 1 : 1;
    renderEntities(obj.value, raw);
    $('next-page').disabled = state.next === null;
    $('page-info').textContent = 'page ' + state.pages + ', ' + obj.value.length + ' entities' + (state.next ? ', more follow' : '');
    // A page that loads clears an earlier error, but not the message of
    // the action that reloaded it ("deleted ...", "saved ...").
    if ($('status').className === 'error') setStatus('');
  } catch (e) { if (seq === loads.page) setStatus(e.message, true); }
}

function renderEntities(entities, raw) {
  const rows = entities.map((e) => ({ e, props: typedProperties(e, raw) }));
  const columns = [...SYSTEM];
  for (const { props } of rows) for (const [name] of props) if (!columns.includes(name)) columns.push(name);
  const head = document.createElement('tr');
  for (const c of columns) { const th = document.createElement('th'); th.textContent = c; head.append(th); }
  $('entities').tHead.replaceChildren(head);
  const body = $('entities').tBodies[0];
  body.replaceChildren();
  for (const { e, props } of rows) {
    const tr = document.createElement('tr');
    const byName = new Map(props.map((p) => [p[0], p]));
    for (const c of columns) {
      const td = document.createElement('td');
      const p = byName.get(c);
      if (p) {
        const v = document.createElement('span');
        v.className = 'val';
        v.textContent = String(p[2]);
        v.title = String(p[2]);
        const t = document.createElement('span');
        t.className = 'type';
        t.textContent = p[1];
        td.append(v, t);
      }
      tr.append(td);
    }
    tr.onclick = () => openEntity(e.PartitionKey, e.RowKey);
    body.append(tr);
  }
}

function entityPath(pk, rk) {
  const lit = (s) => "'" + encodeURIComponent(s.replaceAll("'", "''")) + "'";
  return encodeURIComponent(state.table) + '(PartitionKey=' + lit(pk) + ',RowKey=' + lit(rk) + ')';
}

async function openEntity(pk, rk) {
  if (state.table === null) return;
  const seq = ++loads.entity;
  try {
    const resp = await api('GET', entityPath(pk, rk));
    const { obj, raw } = parseTyped(await resp.text());
    if (seq !== loads.entity) return;
    state.entity = { pk, rk, etag: resp.headers.get('ETag') };
    showEditor(pk + ' / ' + rk, typedProperties(obj, raw));
  } catch (e) { if (seq === loads.entity) setStatus(e.message, true); }
}

function newEntity() {
  state.entity = null;
  showEditor('new entity', [['PartitionKey', 'Edm.String', ''], ['RowKey', 'Edm.String', '']]);
}

function showEditor(title, props) {
  $('entity-title').textContent = title;
  $('delete-entity').hidden = state.entity === null;
  const body = $('properties').tBodies[0];
  body.replaceChildren();
  for (const p of props) if (p[0] !== 'Timestamp') addPropertyRow(p[0], p[1], p[2]);
  $('entity-view').hidden = false;
  $('entity-view').scrollIntoView();
}

function addPropertyRow(name = '', type = 'Edm.String', value = '') {
  const key = name === 'PartitionKey' || name === 'RowKey';
  const tr = document.createElement('tr');
  const n = document.createElement('input');
  n.className = 'name';
  n.value = name;
  n.disabled = key;
  const t = document.createElement('select');
  t.className = 'type';
  for (const ty of TYPES) { const o = document.createElement('option'); o.textContent = ty; t.append(o); }
  t.value = type;
  t.disabled = key;
  const v = document.createElement('input');
  v.className = 'value';
  v.value = String(value);
  v.disabled = key && state.entity !== null;
  const del = document.createElement('button');
  del.textContent = '×';
  del.title = 'remove the property';
  del.hidden = key;
  del.onclick = () => tr.remove();
  for (const el of [n, t, v, del]) { const td = document.createElement('td'); td.append(el); tr.append(td); }
  $('properties').tBodies[0].append(tr);
}

// entityBody builds the JSON of the edited entity, annotating every type
// JSON cannot tell, as the SDKs do.
function entityBody() {
  const body = {};
  for (const tr of $('properties').tBodies[0].rows) {
    const name = tr.querySelector('.name').value.trim();
    const type = tr.querySelector('select').value;
    const text = tr.querySelector('.value').value;
    if (!name) continue;
    switch (type) {
      case 'Edm.String': body[name] = text; break;
      case 'Edm.Boolean':
        if (!/^(true|false)$/.test(text)) throw new Error(name + ': a Boolean is true or false');
        body[name] = text === 'true'; break;
      case 'Edm.Int32':
        if (!/^-?\d+$/.test(text)) throw new Error(name + ': not an integer');
        body[name] = Number(text); break;
      case 'Edm.Double':
        body[name + '@odata.type'] = type;
        body[name] = /^(NaN|-?Infinity)$/.test(text) ? text : Number(text);
        if (Number.isNaN(body[name])) throw new Error(name + ': not a number');
        break;
      default: // Int64, DateTime, Guid and Binary are strings on the wire
        body[name + '@odata.type'] = type;
        body[name] = text;
    }
  }
  return body;
}

async function saveEntity() {
  try {
    const body = entityBody();
    if (state.entity) {
      // Update Entity: replaces the entity if nobody changed it meanwhile.
      await api('PUT', entityPath(state.entity.pk, state.entity.rk), { body, headers: { 'If-Match': state.entity.etag } });
      setStatus('saved ' + state.entity.pk + ' / ' + state.entity.rk);
      await openEntity(state.entity.pk, state.entity.rk);
    } else {
      await api('POST', encodeURIComponent(state.table), { body, headers: { Prefer: 'return-no-content' } });
      setStatus('inserted ' + body.PartitionKey + ' / ' + body.RowKey);
      await openEntity(body.PartitionKey, body.RowKey);
    }
    await loadPage(null);
  } catch (e) { setStatus(e.message, true); }
}

async function deleteEntity() {
  const { pk, rk, etag } = state.entity;
  if (!confirm('Delete entity ' + pk + ' / ' + rk + '?')) return;
  try {
    await api('DELETE', entityPath(pk, rk), { headers: { 'If-Match': etag } });
    setStatus('deleted ' + pk + ' / ' + rk);
    $('entity-view').hidden = true;
    await loadPage(null);
  } catch (e) { setStatus(e.message, true); }
}

function addAccount() {
  const name = $('new-account-name').value.trim();
  const sas = $('new-account-sas').value.trim().replace(/^\?/, '');
  if (!name || !sas) return;
  state.accounts[name] = sas;
  saveAccounts();
  selectAccount(name);
}

window.addEventListener('DOMContentLoaded', () => {
  $('create-table').onclick = createTable;
  $('delete-table').onclick = deleteTable;
  $('apply-filter').onclick = () => { state.filter = $('filter').value.trim(); loadPage(null); };
  $('filter').onkeydown = (e) => { if (e.key === 'Enter') $('apply-filter').click(); };
  $('first-page').onclick = () => loadPage(null);
  $('next-page').onclick = () => loadPage(state.next);
  $('new-entity').onclick = newEntity;
  $('save-entity').onclick = saveEntity;
  $('delete-entity').onclick = deleteEntity;
  $('close-entity').onclick = () => { $('entity-view').hidden = true; };
  $('add-property').onclick = () => addPropertyRow();
  $('add-account-btn').onclick = addAccount;
  loadAccounts();
  renderAccounts();
  const first = Object.keys(state.accounts)[0];
  if (first) selectAccount(first);
  else setStatus('no account: open the link tablebridge serve prints', true);
});
