
(function () {
  var table = document.getElementById('attempts');
  if (!table) return;
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var filter = document.getElementById('attempt-filter');
  var verdict = document.getElementById('attempt-verdict');
  var count = document.getElementById('attempt-count');
  function matches(row, text, kind) {
    var v = row.getAttribute('data-verdict');
    var kindOk = kind === 'all' || (kind === 'rejected' ? v !== 'valid' : v === kind);
    return kindOk && (!text || row.textContent.toLowerCase().indexOf(text) >= 0);
  }
  function apply() {
    var text = filter.value.trim().toLowerCase(), kind = verdict.value, shown = 0;
    rows.forEach(function (row) {
      row.hidden = !matches(row, text, kind);
      if (!row.hidden) shown++;
    });
    count.textContent = shown + ' of ' + rows.length + ' attempts shown';
  }
  function key(row, column, numeric) {
    var cell = row.cells[column];
    if (!numeric) return cell.textContent.trim().toLowerCase();
    var s = cell.getAttribute('data-sort');
    return s === null || s === '' ? null : parseFloat(s);
  }
  function sortBy(th, column) {
    var numeric = th.getAttribute('data-type') === 'num';
    var up = th.getAttribute('aria-sort') !== 'ascending';
    Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', up ? 'ascending' : 'descending');
    rows.sort(function (a, b) {
      var x = key(a, column, numeric), y = key(b, column, numeric);
      if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
      var d = numeric ? x - y : x.localeCompare(y);
      return up ? d : -d;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
    th.addEventListener('click', function () { sortBy(th, column); });
  });
  filter.addEventListener('input', apply);
  verdict.addEventListener('change', apply);
  apply();
  document.documentElement.setAttribute('data-report-ready', 'yes');
})();
