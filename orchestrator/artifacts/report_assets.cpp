// report.html's stylesheet and script, inline in the page: system fonts only, no network.
#include "orchestrator/artifacts/report_sections.hpp"

namespace cuopt::report {

const char* const k_error_catcher = R"JS(
window.addEventListener('error', function (e) {
  var d = document.getElementById('script-error') || document.createElement('div');
  d.id = 'script-error';
  d.textContent = 'script error: ' + (e.message || e.type);
  (document.body || document.documentElement).insertBefore(d, (document.body || document.documentElement).firstChild);
});
)JS";

const char* const k_report_css = R"CSS(
:root{--fg:#1b2432;--muted:#5b6778;--line:#dfe4eb;--bg:#f4f6fa;--card:#fff;--ink:#10213f;
--good:#17773a;--good-bg:#e6f4ea;--bad:#b42318;--bad-bg:#fdecea;--warn:#8a5a00;--warn-bg:#fff3d6;
--accent:#2c5bd0;--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace}
*{box-sizing:border-box}
body{margin:0;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:var(--bg)}
header.page{position:sticky;top:0;z-index:3;background:var(--ink);color:#fff;padding:12px 32px;display:flex;justify-content:space-between;align-items:center;gap:20px;flex-wrap:wrap}
header.page h1{margin:0;font-size:20px;font-weight:700}
header.page h1 .muted{font-weight:400;color:#aebbd3;font-size:15px;margin-left:6px}
header.page p{margin:2px 0 0;font-size:12.5px;color:#c3cde0}
nav a{color:#dbe5ff;text-decoration:none;margin-left:16px;font-size:13px}
nav a:hover{text-decoration:underline}
main{max-width:1360px;margin:0 auto;padding:22px 32px 6px}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:18px 24px;margin:0 0 18px;box-shadow:0 1px 2px rgba(16,33,63,.05)}
h2{margin:0 0 8px;font-size:18px}
h3{margin:16px 0 8px;font-size:14.5px}
.muted{color:var(--muted)}
.small{font-size:11.5px}
.note{background:var(--bg);border-left:3px solid #c6cfdb;padding:8px 12px;color:var(--muted);border-radius:0 6px 6px 0}
.note.warn{background:var(--warn-bg);border-left-color:var(--warn);color:var(--warn)}
code,pre{font-family:var(--mono);font-size:12.5px}
.verdict{border-width:2px}
.verdict.go{border-color:var(--good);background:linear-gradient(180deg,var(--good-bg),#fff 70%)}
.verdict.no-go{border-color:var(--bad);background:linear-gradient(180deg,var(--bad-bg),#fff 70%)}
.verdict-head{display:flex;align-items:center;gap:24px}
.verdict-word{font-size:32px;font-weight:800;letter-spacing:.03em;padding:10px 22px;border-radius:8px;color:#fff;white-space:nowrap}
.go .verdict-word{background:var(--good)}
.no-go .verdict-word{background:var(--bad)}
.verdict-text{flex:1}
.verdict-text h2{font-size:17px;margin:0 0 4px}
.verdict-text p{margin:0;color:var(--muted)}
.figure{text-align:right;min-width:210px}
.figure .big{display:block;font-size:40px;font-weight:700;line-height:1.1;font-variant-numeric:tabular-nums}
.figure .sub{display:block;color:var(--muted);font-size:12.5px}
ul.conditions{list-style:none;padding:0;margin:18px 0 6px;display:grid;grid-template-columns:repeat(2,1fr);gap:10px}
ul.conditions li{border:1px solid var(--line);border-radius:8px;padding:10px 12px;background:#fff;display:grid;grid-template-columns:auto 1fr;column-gap:12px}
.state{grid-row:span 2;align-self:start;font-size:11px;font-weight:700;text-transform:uppercase;padding:3px 9px;border-radius:999px;white-space:nowrap}
li.met .state{background:var(--good-bg);color:var(--good)}
li.not-met .state{background:var(--bad-bg);color:var(--bad)}
li.not-run .state{background:#eceff3;color:var(--muted)}
.conditions .name{font-weight:600}
.conditions .detail{color:var(--muted);font-size:12.5px}
.rule{font-size:12.5px;color:var(--muted);margin:8px 0 0}
table{border-collapse:collapse;width:100%}
table.data th,table.data td{padding:6px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
table.data thead th{background:#eef2f7;font-weight:600;font-size:12.5px;position:sticky;top:0;z-index:1}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.tag{display:inline-block;font-size:11px;padding:0 7px;border-radius:999px;background:#eceff3;color:var(--muted);font-weight:600;margin-left:4px;font-family:system-ui,sans-serif}
.tag.good{background:var(--good-bg);color:var(--good)}
.tag.bad{background:var(--bad-bg);color:var(--bad)}
.tag.warn{background:var(--warn-bg);color:var(--warn)}
.tag.winner{background:var(--ink);color:#fff}
.badge{display:inline-block;font-size:12px;padding:1px 8px;border-radius:6px;font-weight:600;font-family:var(--mono);white-space:nowrap}
.badge.good{background:var(--good-bg);color:var(--good)}
.badge.bad{background:var(--bad-bg);color:var(--bad)}
.bad-text{color:var(--bad)}
tr.rejected td{background:#fffbfa}
tr.winner td{background:#eef3ff}
tr.winner td:first-child{box-shadow:inset 3px 0 0 var(--accent)}
td.reason{white-space:pre-wrap;font-family:var(--mono);font-size:12px;max-width:560px;word-break:break-word}
table.sortable thead th{cursor:pointer;user-select:none;white-space:nowrap}
table.sortable thead th:after{content:" \2195";color:#a7b1c1;font-size:11px}
table.sortable thead th[aria-sort=ascending]:after{content:" \25B2";color:var(--accent)}
table.sortable thead th[aria-sort=descending]:after{content:" \25BC";color:var(--accent)}
.controls{display:flex;gap:10px;align-items:center;margin:8px 0 10px}
.controls input{flex:0 1 420px;padding:7px 10px;border:1px solid #c9d1dc;border-radius:6px;font:inherit}
.controls select{padding:7px 8px;border:1px solid #c9d1dc;border-radius:6px;font:inherit;background:#fff}
.scroll{overflow:auto;max-height:720px;border:1px solid var(--line);border-radius:8px}
.scroll table.data tr:last-child td{border-bottom:0}
.charts{display:grid;grid-template-columns:1fr 1fr;gap:16px}
figure{margin:0;border:1px solid var(--line);border-radius:8px;padding:10px;background:#fff}
figure img{width:100%;height:auto;display:block}
figcaption{font-size:12.5px;color:var(--muted);margin-top:6px}
table.diff{font-family:var(--mono);font-size:12.5px}
table.diff td{padding:0 10px;white-space:pre;vertical-align:top}
table.diff td.ln{width:1%;text-align:right;color:#98a2b3;background:#f7f9fc;user-select:none}
tr.add td.code{background:#e6ffec}
tr.add td.ln{background:#ccffd8}
tr.del td.code{background:#ffebe9}
tr.del td.ln{background:#ffd7d5}
tr.hunk td{background:#eef2fb;color:#4f64a0;padding:3px 10px}
.cards{display:grid;grid-template-columns:repeat(3,1fr);gap:14px}
.card{border:1px solid var(--line);border-radius:8px;padding:10px 14px}
.card h3{margin:0 0 6px;font-size:13.5px}
.card.wide{grid-column:1/-1}
.kv-grid{display:grid;grid-template-columns:repeat(4,1fr);column-gap:20px;font-size:12.5px}
.kv-grid div{display:flex;justify-content:space-between;gap:10px;border-bottom:1px dotted var(--line);padding:2px 0}
.kv-grid .k{color:var(--muted)}
.kv-grid .v{text-align:right;word-break:break-all}
table.kv th{font-weight:500;color:var(--muted);text-align:left;padding:2px 12px 2px 0;white-space:nowrap;vertical-align:top;font-size:12.5px;width:1%}
table.kv td{padding:2px 0;font-size:12.5px;word-break:break-word}
pre.code{background:#f7f9fc;border:1px solid var(--line);border-radius:6px;padding:10px;white-space:pre-wrap;word-break:break-all}
details.iteration{border:1px solid var(--line);border-radius:8px;margin:8px 0;padding:0 14px}
details.iteration>summary{cursor:pointer;padding:10px 0;font-weight:600}
details.system>summary{cursor:pointer;color:var(--muted);font-size:12.5px}
ul.exchanges{margin:0 0 10px;padding-left:18px;font-size:12.5px}
.turn{border-left:3px solid var(--line);margin:8px 0;padding:4px 12px}
.turn .who{font-size:11px;font-weight:700;text-transform:uppercase;color:var(--muted)}
.turn pre{margin:2px 0 0;white-space:pre-wrap;word-break:break-word;max-height:420px;overflow:auto}
.turn.assistant{border-color:var(--accent)}
.turn.tool{border-color:#d4a72c}
table.cost th{width:24%;font-weight:600}
table.cost td.num{width:16%}
tr.total th,tr.total td{border-top:2px solid var(--fg);font-weight:700}
tr.total td.muted{font-weight:400}
.bound{color:var(--warn);font-weight:600;font-size:12px}
footer{max-width:1360px;margin:0 auto;padding:2px 32px 28px;font-size:12px}
#script-error{background:var(--bad);color:#fff;padding:8px 16px;font-weight:700}
@media print{header.page{position:static}.scroll{max-height:none}}
)CSS";

const char* const k_report_script = R"JS(
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
)JS";

std::string fake_run_banner() {
    return "<div id=\"fake-run\" role=\"alert\" style=\"margin:12px 0;padding:12px 16px;"
           "border:3px dashed #b71c1c;background:#fff3e0;color:#b71c1c;font-weight:700;"
           "font-size:16px\">FAKE RUN: a stand-in harness (fake-harness) simulated the GPU. No "
           "time, clock, power, speedup or verdict on this page was measured on a GPU.</div>\n";
}

}  // namespace cuopt::report
