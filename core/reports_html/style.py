"""The report's stylesheet: one column on a phone, wider tables scroll in their own box, a print layout."""

STYLE = """
:root{--ink:#1f2937;--muted:#6b7280;--line:#e5e7eb;--soft:#f8fafc;--accent:#2563eb;--accent-soft:#eff6ff;
--warn:#b45309;--warn-soft:#fffbeb;--ok:#047857;--radius:8px;
font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink);
line-height:1.45;-webkit-text-size-adjust:100%}
*{box-sizing:border-box}
body{margin:0;background:#f1f5f9}
header.top{background:#0f172a;color:#f8fafc;padding:20px 24px 16px}
header.top h1{margin:0 0 4px;font-size:1.35rem;font-weight:650;letter-spacing:-.01em}
header.top p{margin:0;color:#cbd5e1;font-size:.9rem}
nav.toc{position:sticky;top:0;z-index:5;background:#fff;border-bottom:1px solid var(--line);
padding:0 16px;overflow-x:auto;white-space:nowrap}
nav.toc a{display:inline-block;padding:10px 10px;color:var(--muted);text-decoration:none;font-size:.88rem;
border-bottom:2px solid transparent}
nav.toc a:hover,nav.toc a:focus{color:var(--accent);border-bottom-color:var(--accent)}
main{max-width:1180px;margin:0 auto;padding:16px}
section.card{background:#fff;border:1px solid var(--line);border-radius:var(--radius);padding:16px 18px;
margin:0 0 16px;scroll-margin-top:48px}
section.card>h2{margin:0 0 10px;font-size:1.1rem;font-weight:650}
h3{font-size:.95rem;margin:16px 0 6px;font-weight:600}
p.lead,p.note,ul.notes{color:var(--muted);font-size:.85rem}
ul.notes{margin:6px 0 0;padding-left:18px}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;border:1px solid var(--line);border-radius:6px}
table{border-collapse:collapse;width:100%;font-size:.86rem}
th,td{padding:6px 10px;text-align:left;vertical-align:top;border-bottom:1px solid var(--line)}
thead th{background:var(--soft);font-weight:600;color:#374151;white-space:nowrap;position:sticky;top:0}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td .ci{display:block;color:var(--muted);font-size:.78rem}
tr.ceiling td,tr.ceiling th{font-style:italic;background:#fafafa}
tbody th{font-weight:600;white-space:nowrap}
caption{caption-side:top;text-align:left;padding:8px 10px;font-weight:600;font-size:.85rem;color:#374151;
background:#fff}
.scroll{margin:10px 0}
tr:last-child td{border-bottom:0}
dl.kv{display:grid;grid-template-columns:minmax(120px,220px) 1fr;gap:4px 16px;margin:0;font-size:.88rem}
dl.kv dt{color:var(--muted)}
dl.kv dd{margin:0;overflow-wrap:anywhere}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.82rem}
.grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:12px 24px}
.verdict{background:var(--accent-soft);border-left:3px solid var(--accent);padding:8px 12px;margin:8px 0;
border-radius:4px;font-size:.88rem}
.chart{margin:10px 0 18px;border:1px solid var(--line);border-radius:6px;padding:6px;background:#fff;
break-inside:avoid}
.chart svg{display:block;width:100%;height:auto}
pre.diff{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:8px;overflow-x:auto;
font-size:.8rem;margin:6px 0}
pre.diff .add{color:var(--ok)}
pre.diff .del{color:#b91c1c}
.controls{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:0 0 10px}
.controls input[type=search]{flex:1 1 240px;min-width:0;padding:8px 10px;border:1px solid #cbd5e1;
border-radius:6px;font:inherit;font-size:.9rem}
.controls select,.controls button{padding:7px 10px;border:1px solid #cbd5e1;border-radius:6px;background:#fff;
font:inherit;font-size:.86rem;color:var(--ink);cursor:pointer}
.controls button:disabled{opacity:.45;cursor:default}
.controls .count{color:var(--muted);font-size:.85rem;margin-left:auto}
#items-table th{cursor:pointer;user-select:none}
#items-table th[aria-sort=ascending]::after{content:" \\25B2";font-size:.7em;color:var(--accent)}
#items-table th[aria-sort=descending]::after{content:" \\25BC";font-size:.7em;color:var(--accent)}
#items-table td.text{min-width:220px;max-width:420px;overflow-wrap:anywhere}
#items-table td:first-child{white-space:nowrap}
#items-table tr.item{cursor:pointer}
#items-table tr.item:hover td{background:var(--accent-soft)}
#items-table tr.details td{background:var(--soft);padding:10px 14px}
.flag{display:inline-block;background:var(--warn-soft);color:var(--warn);border:1px solid #fde68a;
border-radius:10px;padding:0 7px;margin:1px 2px 1px 0;font-size:.75rem;white-space:nowrap}
.details dl.kv dd{white-space:pre-wrap}
.pager{display:flex;gap:8px;align-items:center;justify-content:flex-end;margin-top:10px;font-size:.86rem}
.pager button{padding:6px 12px;border:1px solid #cbd5e1;border-radius:6px;background:#fff;font:inherit;cursor:pointer}
.pager button:disabled{opacity:.45;cursor:default}
footer{color:var(--muted);font-size:.8rem;text-align:center;padding:8px 16px 24px}
@media (max-width:640px){
header.top{padding:14px 14px 12px}header.top h1{font-size:1.1rem}
main{padding:10px 8px}section.card{padding:12px 12px;border-radius:6px}
dl.kv{grid-template-columns:1fr}dl.kv dt{margin-top:6px}
th,td{padding:5px 7px}#items-table td.text{min-width:160px}
}
@media print{
body{background:#fff}nav.toc,.controls,.pager,noscript{display:none}
header.top{background:#fff;color:#000;border-bottom:2px solid #000;padding:0 0 8px}header.top p{color:#333}
main{max-width:none;padding:0}section.card{border:0;padding:0;margin:0 0 18px;break-inside:auto}
section.card>h2{break-after:avoid}.scroll{overflow:visible;border:0}thead th{position:static}
table{font-size:9pt}tr{break-inside:avoid}a{color:inherit;text-decoration:none}
#items-table tr.item:hover td{background:none}
}
"""
