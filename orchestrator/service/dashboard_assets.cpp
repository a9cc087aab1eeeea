// The dashboard's stylesheet and script, served as /static/dashboard.css and .js (the pages'
// Content-Security-Policy allows no inline code): system fonts, no network beyond the API.
#include "orchestrator/service/dashboard_pages.hpp"

namespace cuopt {

const char* const k_dashboard_css = R"CSS(
:root{--fg:#1d2330;--muted:#667085;--line:#d9dee7;--bg:#f6f7f9;--card:#fff;--accent:#2457c5;
--ok:#1a7f37;--bad:#c0392b;--warn:#9a6700;--run:#0b6bcb}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;align-items:center;gap:28px;padding:12px 32px;background:#1d2330;color:#fff}
header .brand{font-weight:700;letter-spacing:.02em}
header nav a{color:#cfd8ea;margin-right:20px;text-decoration:none}
header nav a:hover{color:#fff}
main{max-width:1180px;margin:0 auto;padding:20px 32px 40px}
h1{font-size:24px;margin:8px 0 12px}
h2{font-size:17px;margin:24px 0 8px}
a{color:var(--accent)}
.muted{color:var(--muted);font-weight:400}
table.jobs{width:100%;border-collapse:collapse;background:var(--card);border:1px solid var(--line)}
table.jobs th,table.jobs td{padding:7px 10px;border-bottom:1px solid var(--line);text-align:left;white-space:nowrap}
table.jobs th{background:#eef1f5;font-size:13px;color:#44506a}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.problem{max-width:28em;overflow:hidden;text-overflow:ellipsis}
.state{display:inline-block;padding:1px 9px;border-radius:10px;font-size:13px;font-weight:600;color:#fff;background:var(--muted)}
.state-running{background:var(--run)}.state-done{background:var(--ok)}
.state-failed{background:var(--bad)}.state-cancelled{background:var(--warn)}
dl.facts{display:grid;grid-template-columns:140px 1fr;gap:4px 16px;background:var(--card);border:1px solid var(--line);padding:14px 18px;margin:0 0 12px}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0}
.reason{background:#fff4f2;border-left:4px solid var(--bad);padding:8px 12px}
.reason-done{background:#eef8f0;border-left-color:var(--ok)}
.reason-running,.reason-queued{background:#eef4fb;border-left-color:var(--run)}
.ok{color:var(--ok);font-weight:600}.bad{color:var(--bad);font-weight:600}
pre{background:#10141c;color:#e6e9ef;padding:12px 14px;overflow:auto;font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace}
pre.log{max-height:360px}
pre.log:empty::before{content:"(empty so far)";color:#8792a8}
pre.check{max-height:560px}
pre.check .fail{color:#ff8a80;font-weight:700}
form#intake{display:grid;gap:12px;max-width:640px;background:var(--card);border:1px solid var(--line);padding:18px}
form#intake label{display:grid;gap:4px;font-weight:600}
input[type=text],input[type=number],textarea{font:inherit;font-weight:400;padding:6px 8px;border:1px solid var(--line);border-radius:4px}
input[type=file]{font-weight:400}
form#intake button{justify-self:start}
button,.button{display:inline-block;font:inherit;font-weight:600;padding:7px 16px;border:0;border-radius:4px;background:var(--accent);color:#fff;cursor:pointer;text-decoration:none}
button.danger{background:var(--bad)}button.secondary{background:#8792a8}
button:disabled{opacity:.6;cursor:wait}
form{margin:10px 0}
#queue-form,#discard-form{display:inline-block;margin-right:10px}
ul.files{columns:3;font:13px ui-monospace,monospace}
#dashboard-error{background:var(--bad);color:#fff;padding:6px 32px}
)CSS";

const char* const k_dashboard_js = R"JS(
(function () {
  'use strict';
  var kind = document.body.getAttribute('data-page');
  var refreshes = 0;
  function get(url) {
    return fetch(url, { credentials: 'same-origin', cache: 'no-store' }).then(function (r) {
      if (!r.ok) throw new Error(url + ': HTTP ' + r.status);
      return r;
    });
  }
  function refreshed() {
    document.documentElement.setAttribute('data-refreshes', String(++refreshes));
  }
  function showError(e) {
    var d = document.getElementById('dashboard-error') || document.createElement('div');
    d.id = 'dashboard-error';
    d.textContent = 'refresh failed: ' + e.message;
    document.body.insertBefore(d, document.body.firstChild);
  }
  // job_json nests the spec and the status; jobs_json may be flat: look in all three.
  function field(j, name) {
    if (j[name] !== undefined) return j[name];
    if (j.status && j.status[name] !== undefined) return j.status[name];
    if (j.spec && j.spec[name] !== undefined) return j.spec[name];
    return undefined;
  }
  var finalStates = { done: 1, failed: 1, cancelled: 1 };
  function progress(j) {
    var it = field(j, 'iteration'), n = field(j, 'attempts') || 0, of = field(j, 'max_iterations');
    if ((it === undefined || it < 0) && !n) return '-';
    return 'iteration ' + Math.max(it || 0, 0) + (of > 0 ? ' of ' + of : '') + ', ' + n +
      (n === 1 ? ' attempt' : ' attempts');
  }
  function best(j) {
    var b = field(j, 'best_speedup');
    return b > 0 ? b.toFixed(2) + 'x' : '-';
  }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function badge(state) { return el('span', state, 'state state-' + state); }
  function link(href, text) { var a = el('a', text); a.href = href; return a; }
  function jobRow(j) {
    var id = String(field(j, 'id')), state = String(field(j, 'state')), tr = el('tr');
    var href = '/jobs/' + encodeURIComponent(id);
    tr.setAttribute('data-id', id);
    var c = el('td'); c.appendChild(link(href, id)); tr.appendChild(c);
    tr.appendChild(el('td', String(field(j, 'kind') || '')));
    tr.appendChild(el('td', String(field(j, 'problem') || ''), 'problem'));  // text, never HTML
    c = el('td'); c.appendChild(badge(state)); tr.appendChild(c);
    tr.appendChild(el('td', String(field(j, 'priority') || 0), 'num'));
    tr.appendChild(el('td', progress(j)));
    tr.appendChild(el('td', best(j), 'num'));
    tr.appendChild(el('td', String(field(j, 'submitted') || '')));
    c = el('td');
    // Only a report that exists: a job cancelled while queued has none, nor any run folder.
    if (field(j, 'has_report') === true) c.appendChild(link(href + '/report', 'report'));
    tr.appendChild(c);
    return tr;
  }
  function renderQueue(data) {
    var jobs = data.jobs || [], body = document.getElementById('jobs');
    while (body.firstChild) body.removeChild(body.firstChild);
    jobs.forEach(function (j) { body.appendChild(jobRow(j)); });
    document.getElementById('queue-count').textContent = jobs.length + (jobs.length === 1 ? ' job' : ' jobs');
    var none = document.getElementById('no-jobs');
    if (none) none.hidden = jobs.length > 0;
  }
  function refreshQueue() {
    get('/api/jobs').then(function (r) { return r.json(); }).then(renderQueue)
      .then(refreshed).catch(showError);
  }
  function setText(id, text) { var e = document.getElementById(id); if (e) e.textContent = text; }
  function renderJob(j, wasFinal) {
    var state = String(field(j, 'state')), box = document.getElementById('job-state');
    while (box.firstChild) box.removeChild(box.firstChild);
    box.appendChild(badge(state));
    setText('job-progress', progress(j));
    setText('job-best', best(j));
    setText('job-started', field(j, 'started') || '-');
    setText('job-finished', field(j, 'finished') || '-');
    var reason = field(j, 'reason') || '', r = document.getElementById('job-reason');
    r.textContent = reason;
    r.hidden = !reason;
    r.className = 'reason reason-' + state;
    document.getElementById('cancel-form').hidden = !!finalStates[state];
    if (finalStates[state] && !wasFinal) location.reload();  // the report and run folder links
  }
  function refreshJob(id, wasFinal) {
    var base = '/api/jobs/' + encodeURIComponent(id);
    get(base).then(function (r) { return r.json(); }).then(function (j) { renderJob(j, wasFinal); })
      .then(function () { return get(base + '/log'); }).then(function (r) { return r.text(); })
      .then(function (t) { setText('job-log', t); }).then(refreshed).catch(showError);
  }
  if (kind === 'queue') {
    refreshQueue();
    setInterval(refreshQueue, 2000);
  } else if (kind === 'job') {
    var id = document.body.getAttribute('data-job');
    var wasFinal = !!document.querySelector('#job-state .state-done, #job-state .state-failed, #job-state .state-cancelled');
    refreshJob(id, wasFinal);
    setInterval(function () { refreshJob(id, wasFinal); }, 1500);
  } else if (kind === 'submit') {
    document.getElementById('intake').addEventListener('submit', function () {
      var b = document.getElementById('upload');
      b.disabled = true;
      b.textContent = 'Uploading and checking...';
    });
  }
  document.documentElement.setAttribute('data-dashboard-ready', 'yes');
})();
)JS";

}  // namespace cuopt
