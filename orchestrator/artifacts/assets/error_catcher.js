
window.addEventListener('error', function (e) {
  var d = document.getElementById('script-error') || document.createElement('div');
  d.id = 'script-error';
  d.textContent = 'script error: ' + (e.message || e.type);
  (document.body || document.documentElement).insertBefore(d, (document.body || document.documentElement).firstChild);
});
