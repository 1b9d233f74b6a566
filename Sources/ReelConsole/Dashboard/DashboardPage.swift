// The console's one page (plain HTML, compiled into the binary: no Node, no CDN, nothing to
// install beside `reel`). console.js draws every view into it; console.css styles it.
enum DashboardPage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Reel console</title>
<link rel="stylesheet" href="/console.css">
</head>
<body>
<header class="bar">
  <a class="brand" href="#/jobs">Reel</a>
  <nav>
    <a id="nav-jobs" href="#/jobs">Jobs</a>
    <a id="nav-agents" href="#/agents">Agents</a>
  </nav>
  <span class="spacer"></span>
  <span id="live" class="live off" title="live updates">offline</span>
  <span id="role" class="role"></span>
  <button id="logout" class="link" hidden>Sign out</button>
</header>

<main>
  <section id="login" hidden>
    <h1>Sign in</h1>
    <p>Paste a console token. On the farm, <code>reel token</code> prints one
       (<code>reel token --read-only</code> for a token that can only look).</p>
    <form id="login-form">
      <input id="token-input" type="password" autocomplete="off" spellcheck="false" placeholder="token" aria-label="console token">
      <button type="submit">Open the console</button>
    </form>
    <p id="login-error" class="error" role="alert"></p>
  </section>

  <section id="jobs-view" hidden>
    <div class="heading">
      <h1>Jobs</h1>
      <label class="filter">Show
        <select id="job-filter">
          <option value="">all</option>
          <option value="active">active</option>
          <option value="done">done</option>
          <option value="failed">failed</option>
          <option value="cancelled">cancelled</option>
        </select>
      </label>
    </div>
    <div class="table-wrap">
      <table id="jobs" class="grid cards">
        <thead><tr>
          <th class="num">#</th><th>Name</th><th>State</th><th class="wide">Progress</th>
          <th class="num">Frames/s</th><th class="num">ETA</th><th class="opt">Submitted</th><th class="num">Priority</th><th class="acts"></th>
        </tr></thead>
        <tbody></tbody>
      </table>
    </div>
    <p id="jobs-empty" class="muted" hidden>No jobs yet. Submit one with <code>reel submit COMPOSITION.json</code>.</p>
  </section>

  <section id="job-view" hidden>
    <p><a href="#/jobs">← Jobs</a></p>
    <div class="heading">
      <h1 id="job-title"></h1>
      <span id="job-state"></span>
    </div>
    <div id="job-summary" class="summary"></div>
    <figure id="poster" class="poster" hidden>
      <img id="poster-image" alt="the newest finished frame of the job">
      <figcaption class="muted">Newest finished frame</figcaption>
    </figure>
    <div id="job-actions" class="actions"></div>
    <h2>Chunks</h2>
    <div id="strip" class="strip" aria-label="chunks by state"></div>
    <div class="legend">
      <span><i class="cell queued"></i>queued</span><span><i class="cell leased"></i>rendering</span>
      <span><i class="cell done"></i>done</span><span><i class="cell failed"></i>failed</span><span><i class="cell cancelled"></i>cancelled</span>
    </div>
    <div class="table-wrap">
      <table id="chunks" class="grid compact">
        <thead><tr>
          <th>Task</th><th class="opt">Frames</th><th>State</th><th>Agent</th><th class="num">Attempts</th>
          <th class="opt">Started</th><th class="opt">Finished</th><th class="num">Frames/s</th><th>Error</th>
        </tr></thead>
        <tbody></tbody>
      </table>
    </div>
    <h2>History</h2>
    <div class="table-wrap">
      <table id="events" class="grid compact">
        <thead><tr><th>Time</th><th>Event</th><th>Task</th><th>Agent</th><th>Detail</th></tr></thead>
        <tbody></tbody>
      </table>
    </div>
  </section>

  <section id="agents-view" hidden>
    <h1>Agents</h1>
    <div class="table-wrap">
      <table id="agents" class="grid cards">
        <thead><tr>
          <th>Agent</th><th class="opt">Host</th><th>State</th><th class="num">Threads</th><th class="num">Heartbeat</th>
          <th>Current chunk</th><th class="num">Failures</th><th class="opt">Encoders</th><th>Problems</th>
        </tr></thead>
        <tbody></tbody>
      </table>
    </div>
    <p id="agents-empty" class="muted" hidden>No agents. Start one with <code>reel agent --coordinator HOST:PORT</code>.</p>
  </section>
  <p id="message" class="toast" role="status" hidden></p>
</main>
<script src="/console.js"></script>
</body>
</html>
"""#
}
