
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
