// The console's style sheet: system fonts, light and dark, one column on a phone.
enum DashboardStyle {
    static let css = #"""
:root {
  --bg: #f6f7f9; --panel: #fff; --text: #1c2330; --muted: #6b7585; --line: #e2e6ec; --accent: #3558d8;
  --queued: #c5ccd8; --leased: #3d8bfd; --done: #2fa565; --failed: #d9463b; --cancelled: #8c8c8c; --paused: #d59b1c;
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root { --bg: #12151b; --panel: #1b2029; --text: #e4e8ef; --muted: #939cab; --line: #2c3340; --accent: #7d9bff; --queued: #4a5262; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; background: var(--bg); color: var(--text); }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.92em; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
.bar { display: flex; align-items: center; gap: 1rem; padding: 0.6rem 1.2rem; background: var(--panel); border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 2; }
.brand { font-weight: 700; font-size: 1.1rem; color: var(--text); letter-spacing: 0.02em; }
nav { display: flex; gap: 0.8rem; }
nav a { color: var(--muted); padding: 0.2rem 0.1rem; }
nav a.current { color: var(--text); border-bottom: 2px solid var(--accent); }
.spacer { flex: 1; }
.live { font-size: 0.85rem; color: var(--muted); }
.live::before { content: ""; display: inline-block; width: 0.55rem; height: 0.55rem; border-radius: 50%; margin-right: 0.35rem; background: var(--failed); vertical-align: 0.05rem; }
.live.on::before { background: var(--done); }
.role { font-size: 0.8rem; color: var(--muted); border: 1px solid var(--line); border-radius: 1rem; padding: 0.05rem 0.55rem; }
.role:empty { display: none; }
main { max-width: 1280px; margin: 0 auto; padding: 1rem 1.2rem 3rem; }
h1 { font-size: 1.35rem; margin: 0.4rem 0 0.8rem; }
h2 { font-size: 1.05rem; margin: 1.6rem 0 0.6rem; }
.heading { display: flex; align-items: center; gap: 0.8rem; flex-wrap: wrap; }
.heading h1 { margin-right: auto; }
.muted { color: var(--muted); }
.error { color: var(--failed); }
.table-wrap { overflow-x: auto; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; }
table.grid { width: 100%; border-collapse: collapse; }
.grid th, .grid td { text-align: left; padding: 0.55rem 0.7rem; border-bottom: 1px solid var(--line); white-space: nowrap; }
.grid th { font-size: 0.78rem; text-transform: uppercase; letter-spacing: 0.04em; color: var(--muted); font-weight: 600; }
.grid tbody tr:last-child td { border-bottom: 0; }
.grid.compact td { padding: 0.35rem 0.7rem; }
.grid td.num, .grid th.num { text-align: right; font-variant-numeric: tabular-nums; }
.grid td.wrap { white-space: normal; min-width: 14rem; }
#jobs tbody tr { cursor: pointer; }
#jobs tbody tr:hover { background: color-mix(in srgb, var(--accent) 6%, transparent); }
.wide { width: 28%; min-width: 10rem; }
.progress { display: flex; align-items: center; gap: 0.5rem; }
.progress .track { flex: 1; height: 0.5rem; border-radius: 0.25rem; background: var(--queued); overflow: hidden; min-width: 5rem; }
.progress .fill { height: 100%; background: var(--leased); transition: width 0.4s; }
.progress.done .fill { background: var(--done); }
.progress.failed .fill { background: var(--failed); }
.progress span { font-variant-numeric: tabular-nums; min-width: 2.6rem; text-align: right; }
.badge { display: inline-block; padding: 0.05rem 0.5rem; border-radius: 1rem; font-size: 0.8rem; font-weight: 600; background: var(--queued); color: #1c2330; }
.badge.running, .badge.finalising, .badge.busy, .badge.leased { background: var(--leased); color: #fff; }
.badge.done, .badge.idle { background: var(--done); color: #fff; }
.badge.failed, .badge.quarantined { background: var(--failed); color: #fff; }
.badge.cancelled, .badge.offline { background: var(--cancelled); color: #fff; }
.badge.paused, .badge.draining { background: var(--paused); color: #fff; }
.acts { text-align: right; }
.acts button + button { margin-left: 0.35rem; }
button { font: inherit; border: 1px solid var(--line); background: var(--panel); color: var(--text); border-radius: 6px; padding: 0.25rem 0.7rem; cursor: pointer; }
button:hover { border-color: var(--accent); }
button.danger { color: var(--failed); }
button.link { border: 0; background: none; color: var(--accent); padding: 0; }
button:disabled { opacity: 0.5; cursor: default; }
.actions { display: flex; gap: 0.5rem; flex-wrap: wrap; align-items: center; margin: 0.8rem 0; }
.actions input { width: 5rem; font: inherit; padding: 0.2rem 0.4rem; border: 1px solid var(--line); border-radius: 6px; background: var(--panel); color: var(--text); }
.summary { display: grid; grid-template-columns: repeat(auto-fit, minmax(9rem, 1fr)); gap: 0.6rem; }
.summary > div { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 0.5rem 0.7rem; }
.summary b { display: block; font-size: 0.75rem; color: var(--muted); text-transform: uppercase; letter-spacing: 0.04em; font-weight: 600; }
.summary .progress { margin-top: 0.3rem; }
.poster { margin: 0.8rem 0 0; }
.poster img { display: block; max-width: min(100%, 320px); height: auto; border: 1px solid var(--line); border-radius: 6px; background: #000; }
.poster figcaption { font-size: 0.8rem; margin-top: 0.25rem; }
.strip { display: flex; flex-wrap: wrap; gap: 3px; padding: 0.6rem; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; }
.cell { display: inline-block; width: 1.4rem; height: 1.8rem; border-radius: 3px; background: var(--queued); transition: background 0.3s; }
.strip .cell { cursor: default; }
.cell.leased { background: var(--leased); animation: pulse 1.2s ease-in-out infinite; }
.cell.done { background: var(--done); }
.cell.failed { background: var(--failed); }
.cell.cancelled { background: var(--cancelled); }
.cell.retried { box-shadow: inset 0 -4px 0 var(--paused); }
@keyframes pulse { 50% { opacity: 0.55; } }
.legend { display: flex; gap: 1rem; flex-wrap: wrap; margin: 0.5rem 0 1rem; color: var(--muted); font-size: 0.85rem; }
.legend .cell { width: 0.8rem; height: 0.8rem; margin-right: 0.3rem; vertical-align: -0.1rem; animation: none; }
#login { max-width: 32rem; margin: 3rem auto; background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 1.2rem 1.4rem; }
#login form { display: flex; gap: 0.5rem; }
#login input { flex: 1; font: inherit; padding: 0.4rem 0.6rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--text); }
.filter { color: var(--muted); font-size: 0.9rem; }
.filter select { font: inherit; margin-left: 0.3rem; }
.toast { position: fixed; bottom: 1rem; left: 50%; transform: translateX(-50%); background: var(--text); color: var(--bg); padding: 0.5rem 1rem; border-radius: 6px; max-width: 90vw; }
@media (max-width: 700px) {
  body { font-size: 15px; }
  .bar { gap: 0.55rem; padding: 0.5rem 0.7rem; }
  /* Jobs and agents as cards: name and state, then the progress bar, then the numbers. */
  table.cards thead { display: none; }
  table.cards, table.cards tbody { display: block; }
  table.cards tr { display: flex; flex-wrap: wrap; align-items: center; gap: 0.35rem 0.9rem; padding: 0.65rem 0.75rem; border-bottom: 1px solid var(--line); }
  table.cards tbody tr:last-child { border-bottom: 0; }
  table.cards td { border: 0; padding: 0; white-space: normal; }
  table.cards td.c-id { color: var(--muted); }
  table.cards td.c-name { flex: 1 1 auto; font-weight: 600; }
  table.cards td.c-progress, table.cards td.c-full { flex: 1 1 100%; width: auto; min-width: 0; }
  table.cards td.lab { font-size: 0.85rem; }
  table.cards td.lab::before { content: attr(data-label) " "; color: var(--muted); }
  table.cards td.acts { margin-left: auto; }
  main { padding: 0.8rem 0.6rem 3rem; }
  .opt { display: none; }
  .grid th, .grid td { padding: 0.45rem 0.5rem; }
  .wide { min-width: 7rem; }
  #login form { flex-direction: column; }
  .cell { width: 0.9rem; height: 1.3rem; }
}
"""#
}
