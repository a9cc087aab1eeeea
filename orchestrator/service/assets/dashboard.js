// The dashboard's script. Every page's address first answers with a shell (no data); this
// script signs in, keeps the session id in this origin's localStorage (never a cookie, which
// a browser would send to every port of the host) and fetches the page with
// `Authorization: Session ID`. Forms are sent the same way. A report or run file, which the
// browser must open by its address, is opened with a one-time ticket.
(function () {
  'use strict';
  var KEY = 'cuopt-dashboard-session';
  var refreshes = 0, timer = null, signedOut = false;
  function session() {
    try { return localStorage.getItem(KEY) || ''; } catch (e) { return ''; }
  }
  function call(url, options) {
    options = options || {};
    options.headers = options.headers || {};
    options.headers.Authorization = 'Session ' + session();
    options.cache = 'no-store';
    options.credentials = 'omit';
    return fetch(url, options).then(function (r) {
      if (r.status === 401) {
        signOut('Your session ended (idle too long, too old, signed out elsewhere, or the ' +
                'daemon restarted): sign in again.');
        throw new Error('signed out');
      }
      return r;
    });
  }
  function get(url) {
    return call(url).then(function (r) {
      if (!r.ok) throw new Error(url + ': HTTP ' + r.status);
      return r;
    });
  }
  function refreshed() {
    document.documentElement.setAttribute('data-refreshes', String(++refreshes));
  }
  function showError(e) {
    if (signedOut) return;
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
    if (finalStates[state] && !wasFinal) load();  // the report and run folder links
  }
  function refreshJob(id, wasFinal) {
    var base = '/api/jobs/' + encodeURIComponent(id);
    get(base).then(function (r) { return r.json(); }).then(function (j) { renderJob(j, wasFinal); })
      .then(function () { return get(base + '/log'); }).then(function (r) { return r.text(); })
      .then(function (t) { setText('job-log', t); }).then(refreshed).catch(showError);
  }
  function stop() {
    if (timer) clearInterval(timer);
    timer = null;
  }
  // What a page does once shown: the queue and a job page refresh themselves.
  function start() {
    stop();
    var kind = document.body.getAttribute('data-page');
    if (kind === 'queue') {
      refreshQueue();
      timer = setInterval(refreshQueue, 2000);
    } else if (kind === 'job') {
      var id = document.body.getAttribute('data-job');
      var wasFinal = !!document.querySelector('#job-state .state-done, #job-state .state-failed, #job-state .state-cancelled');
      refreshJob(id, wasFinal);
      timer = setInterval(function () { refreshJob(id, wasFinal); }, 1500);
    }
    document.documentElement.setAttribute('data-dashboard-ready', 'yes');
  }
  // A page's HTML from the server, shown in place of this one's body (its scripts never run:
  // this script is the only one).
  function render(html) {
    var doc = new DOMParser().parseFromString(html, 'text/html');
    document.title = doc.title;
    document.documentElement.replaceChild(document.adoptNode(doc.body), document.body);
    start();
  }
  function showPage(r) {
    if (r.redirected) { location.assign(r.url); return; }  // a real load, shell and all
    return r.text().then(render);
  }
  var documentPath = /^\/jobs\/[^/]+\/(report$|files\/.)/;
  function openDocument() {
    var path = location.pathname;
    if (/(^|[?&])ticket=/.test(location.search)) {  // a ticket that did not open it
      render('<title>Not opened</title><body data-page="message"><main><h1>Not opened</h1>' +
             '<p>This address held a one-time ticket, spent or expired. <a id="reopen"></a></p>' +
             '</main></body>');
      var a = document.getElementById('reopen');
      a.href = path;
      a.textContent = 'Open it again';
      return;
    }
    call(location.origin + '/api/ticket?path=' + encodeURIComponent(path), { method: 'POST' })
      .then(function (r) {
        if (!r.ok) throw new Error('no ticket for ' + path + ': HTTP ' + r.status);
        return r.json();
      })
      .then(function (j) { location.replace(path + '?ticket=' + encodeURIComponent(j.ticket)); })
      .catch(showError);
  }
  function load() {
    stop();
    if (documentPath.test(location.pathname)) return openDocument();
    // The origin named: a path such as //host/x would otherwise be another origin's URL.
    call(location.origin + location.pathname + location.search).then(showPage).catch(showError);
  }
  function el2(tag, attrs, text) {
    var e = el(tag, text);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    return e;
  }
  function signOut(why) {
    signedOut = true;
    stop();
    try { localStorage.removeItem(KEY); } catch (e) { /* nothing kept */ }
    var body = el2('body', { 'data-page': 'sign-in' }), main = el('main');
    var header = el('header'); header.appendChild(el('span', 'cuda-optimizer', 'brand'));
    body.appendChild(header);
    main.appendChild(el('h1', 'Sign in'));
    if (why) main.appendChild(el2('p', { id: 'sign-in-reason', 'class': 'reason' }, why));
    var form = el2('form', { id: 'sign-in' });
    var label = el('label', 'The dashboard\'s token (the file serve named when it started) ');
    label.appendChild(el2('input', { type: 'password', id: 'token', autocomplete: 'off', required: '' }));
    form.appendChild(label);
    form.appendChild(el2('button', { type: 'submit', id: 'sign-in-button' }, 'Sign in'));
    main.appendChild(form);
    body.appendChild(main);
    document.title = 'Sign in - cuda-optimizer';
    document.documentElement.replaceChild(body, document.body);
    document.documentElement.setAttribute('data-dashboard-ready', 'yes');
  }
  // The token, traded once for a session; the token itself is kept nowhere.
  function signIn(token) {
    return fetch('/api/session', {
      method: 'POST', cache: 'no-store', credentials: 'omit',
      headers: { Authorization: 'Bearer ' + token }
    }).then(function (r) {
      if (r.status === 401) throw new Error('That is not the dashboard\'s token.');
      if (!r.ok) throw new Error('Signing in failed: HTTP ' + r.status);
      return r.json();
    }).then(function (j) {
      localStorage.setItem(KEY, j.session);
      signedOut = false;
    });
  }
  // A form's fields; a folder's files under their paths within it.
  function formBody(form) {
    var data = new FormData(form), folder = form.querySelector('input[name=folder]');
    if (form.getAttribute('enctype') !== 'multipart/form-data') return new URLSearchParams(data);
    if (folder && folder.files.length) {
      data.delete('folder');
      Array.prototype.forEach.call(folder.files, function (f) {
        data.append('folder', f, f.webkitRelativePath || f.name);
      });
    }
    return data;
  }
  document.addEventListener('submit', function (e) {
    var form = e.target;
    e.preventDefault();
    if (form.id === 'sign-in') {
      signIn(document.getElementById('token').value).then(load, function (err) { signOut(err.message); });
      return;
    }
    var button = form.querySelector('button[type=submit]');
    if (button) button.disabled = true;
    if (form.id === 'intake') button.textContent = 'Uploading and checking...';
    call(form.getAttribute('action'), { method: 'POST', body: formBody(form) })
      .then(showPage).catch(showError);
  });
  document.addEventListener('click', function (e) {
    if (!e.target || e.target.id !== 'sign-out') return;
    call('/api/logout', { method: 'POST' }).then(function () { signOut('Signed out.'); })
      .catch(showError);
  });
  // A sign-in link carries the token after '#', which the browser never sends; it leaves the
  // address (and the history) before anything else happens.
  if (location.hash.indexOf('#token=') === 0) {
    var token = location.hash.slice(7);
    history.replaceState(null, '', location.pathname + location.search);
    // A link with a wrong token (any page can open one) never ends the session this tab has.
    var had = session();
    try { token = decodeURIComponent(token); } catch (e) { token = ''; }
    signIn(token).then(load, function (err) {
      if (!had) return signOut(err.message);
      load();
      showError(new Error('the sign-in link was refused (' + err.message + '); still signed in'));
    });
  } else if (!session()) {
    signOut('');
  } else {
    load();
  }
})();
