// The console's script: plain JavaScript, no framework. The token comes once from
// `/#token=TOKEN` or the sign-in field and is kept in sessionStorage (this tab only); every
// API call sends it as `Authorization: Bearer`. Live updates come from `/api/v1/stream`,
// read with fetch (EventSource cannot send the header). Everything shown is set with
// textContent, never as HTML: job and agent names are user input.
"use strict";
(function () {
  const KEY = "reel.console.token";
  const state = { token: null, role: null, jobs: [], agents: [], filter: "", route: null,
                  job: null, jobSeen: null, events: [], loadingJob: false, live: false, previewJob: null };
  const $ = (id) => document.getElementById(id);

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key === "style") Object.assign(node.style, value);   // CSSOM: allowed by the page's CSP
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  // ---- formatting ----
  const pct = (f) => Math.floor(Math.max(0, Math.min(1, f || 0)) * 100) + "%";
  function clock(seconds) {
    if (seconds === null || seconds === undefined || !isFinite(seconds)) return "–";
    const s = Math.max(0, Math.round(seconds));
    const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, r = s % 60;
    return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${String(r).padStart(2, "0")}` : `${m}:${String(r).padStart(2, "0")}`;
  }
  function age(seconds) {
    if (seconds === null || seconds === undefined) return "never";
    if (seconds < 10) return seconds.toFixed(1) + "s";
    if (seconds < 60) return Math.floor(seconds) + "s";
    if (seconds < 3600) return Math.floor(seconds / 60) + "m" + String(Math.floor(seconds) % 60).padStart(2, "0") + "s";
    return Math.floor(seconds / 3600) + "h" + String(Math.floor(seconds / 60) % 60).padStart(2, "0") + "m";
  }
  function when(ms) {
    if (!ms) return "–";
    const d = new Date(ms), now = new Date();
    const time = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
    return d.toDateString() === now.toDateString() ? time : d.toLocaleDateString() + " " + time;
  }
  const fps = (v) => (v === null || v === undefined) ? "–" : v.toFixed(1);
  const ended = (job) => ["done", "failed", "cancelled"].includes(job.state);
  const stateLabel = (s) => s.replace(/_/g, " ");

  function progressBar(job) {
    return el("div", { class: "progress " + job.state },
      el("div", { class: "track" }, el("div", { class: "fill", style: { width: pct(job.progress) } })),
      el("span", { text: pct(job.progress) }));
  }
  function stateBadge(job) {
    const badges = [el("span", { class: "badge " + job.state, text: stateLabel(job.state) })];
    if (job.paused && !ended(job)) badges.push(" ", el("span", { class: "badge paused", text: "paused" }));
    if (job.needsEncoder) badges.push(" ", el("span", { class: "badge paused", text: "needs " + job.needsEncoder,
                                                        title: "no connected agent has this encoder" }));
    return badges;
  }

  // ---- token and API ----
  function takeTokenFromAddress() {
    const match = location.hash.match(/(?:^#|&)token=([^&]+)/);
    if (!match) return;
    sessionStorage.setItem(KEY, decodeURIComponent(match[1]));
    // `#token=T&view=/jobs/42` opens that view; the token leaves the address bar either way.
    const view = location.hash.match(/&view=([^&]+)/);
    history.replaceState(null, "", location.pathname + location.search + "#" + (view ? decodeURIComponent(view[1]) : "/jobs"));
  }

  class Unauthorized extends Error {}

  async function api(path, options) {
    const response = await fetch(path, Object.assign({}, options, {
      headers: Object.assign({ "Authorization": "Bearer " + state.token }, (options || {}).headers || {}),
      cache: "no-store",
    }));
    if (response.status === 401) {
      const body = await response.json().catch(() => ({}));
      throw new Unauthorized(body.error || "the token was refused");
    }
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.error || `${response.status} ${response.statusText}`);
    return body;
  }

  function signOut(message) {
    sessionStorage.removeItem(KEY);
    state.token = null; state.role = null;
    if (streamAbort) streamAbort.abort();
    stopPreview();
    $("role").textContent = "";
    $("logout").hidden = true;
    setLive(false);
    show("login");
    $("login-error").textContent = message || "";
  }

  async function signIn(token) {
    state.token = token;
    try {
      const session = await api("/api/v1/session");
      state.role = session.role;
      $("role").textContent = session.role === "operator" ? "operator" : "read-only";
      $("logout").hidden = false;
      sessionStorage.setItem(KEY, token);
      $("login-error").textContent = "";
      const [jobs, agents] = await Promise.all([api("/api/v1/jobs"), api("/api/v1/agents")]);
      state.jobs = jobs.jobs; state.agents = agents.agents; state.coordinators = agents.coordinators || [];
      route();
      startStream();
    } catch (error) {
      signOut(error instanceof Unauthorized ? error.message : "cannot reach the coordinator: " + error.message);
    }
  }

  const canAct = () => state.role === "operator";

  async function act(job, action, body) {
    try {
      if (action === "priority") {
        await api(`/api/v1/jobs/${job}/priority`, { method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
      } else {
        if (action === "cancel" && !confirm(`Cancel job ${job}?`)) return;
        await api(`/api/v1/jobs/${job}/${action}`, { method: "POST" });
      }
      toast(action === "priority" ? `job ${job}: priority ${body.priority}` : `job ${job}: ${action} done`);
      if (state.route && state.route.job === job) refreshJob(true);
    } catch (error) {
      if (error instanceof Unauthorized) return signOut(error.message);
      toast(`job ${job}: ${error.message}`);
    }
  }

  let toastTimer = null;
  function toast(text) {
    const node = $("message");
    node.textContent = text; node.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { node.hidden = true; }, 3500);
  }

  function actionButtons(job, compact) {
    if (!canAct()) return [];
    const buttons = [];
    const button = (label, action, extra) => el("button", Object.assign({ type: "button", "data-action": action,
      onclick: (event) => { event.stopPropagation(); act(job.id, action); } }, extra || {}), label);
    if (!ended(job)) {
      buttons.push(job.paused ? button("Resume", "resume") : button("Pause", "pause"));
      buttons.push(button("Cancel", "cancel", { class: "danger" }));
    }
    if (job.state === "failed" || job.state === "cancelled") buttons.push(button("Retry", "retry"));
    if (!compact && !ended(job)) {
      const input = el("input", { type: "number", min: -1000, max: 1000, step: 1, value: job.priority, "aria-label": "priority" });
      buttons.push(el("span", {}, "Priority ", input, " ",
        el("button", { type: "button", "data-action": "priority",
          onclick: () => act(job.id, "priority", { priority: parseInt(input.value, 10) || 0 }) }, "Set")));
    }
    return buttons;
  }

  // ---- live stream ----
  let streamAbort = null;
  function setLive(on) {
    state.live = on;
    $("live").className = "live " + (on ? "on" : "off");
    $("live").textContent = on ? "live" : "offline";
  }

  async function startStream() {
    if (streamAbort) streamAbort.abort();
    const controller = new AbortController();
    streamAbort = controller;
    while (state.token && !controller.signal.aborted) {
      try {
        const response = await fetch("/api/v1/stream", { headers: { "Authorization": "Bearer " + state.token },
                                                          signal: controller.signal, cache: "no-store" });
        if (response.status === 401) { const b = await response.json().catch(() => ({})); return signOut(b.error); }
        if (!response.ok || !response.body) throw new Error(String(response.status));
        setLive(true);
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let end;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            let event = "message", data = "";
            for (const line of block.split("\n")) {
              if (line.startsWith("event:")) event = line.slice(6).trim();
              else if (line.startsWith("data:")) data += line.slice(5).trim();
            }
            if (event === "snapshot" && data) applySnapshot(JSON.parse(data));
          }
        }
      } catch (error) {
        if (controller.signal.aborted) return;
      }
      setLive(false);
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }

  function applySnapshot(snapshot) {
    state.jobs = snapshot.jobs;
    state.agents = snapshot.agents;
    // Both tables are kept current whatever the view: switching views shows them at once.
    renderJobs();
    renderAgents();
    if (state.route && state.route.view === "job") {
      const summary = state.jobs.find((job) => job.id === state.route.job);
      // The job changed (a chunk moved, frames were rendered): read its chunks and new events.
      if (!summary || JSON.stringify(summary) !== state.jobSeen) refreshJob(false);
    }
    // A batch's rows are jobs: any change of the jobs may be one of its rows'.
    if (state.route && state.route.view === "batch") refreshBatch();
  }

  // ---- a batch: its summary and every row with its job ----
  async function refreshBatch() {
    if (!state.route || state.route.view !== "batch" || state.loadingBatch) return;
    state.loadingBatch = true;
    const id = state.route.batch;
    try {
      const report = await api(`/api/v1/batches/${id}/rows`);
      if (!state.route || state.route.batch !== id) return;
      state.batch = report;
      renderBatch();
    } catch (error) {
      if (error instanceof Unauthorized) return signOut(error.message);
      $("batch-title").textContent = `Batch b${id}`;
      $("batch-summary").replaceChildren(el("p", { class: "error", text: error.message }));
    } finally {
      state.loadingBatch = false;
    }
  }

  function renderBatch() {
    const batch = state.batch;
    const body = $("batch-rows").tBodies[0];
    if (!batch) { body.replaceChildren(); return; }
    const c = batch.counts;
    $("batch-title").textContent = `Batch b${batch.id} · ${batch.name}`;
    $("batch-state").replaceChildren(el("span", { class: "badge " + batch.state, text: batch.state }));
    const notSubmitted = batch.rows - (c.queued + c.running + c.done + c.failed + c.cancelled);
    const cell = (label, value) => el("div", {}, el("b", { text: label }), String(value));
    $("batch-summary").replaceChildren(...[
      cell("rows", batch.rows), cell("queued", c.queued), cell("running", c.running), cell("done", c.done), cell("failed", c.failed),
      c.cancelled ? cell("cancelled", c.cancelled) : null,
      notSubmitted > 0 ? cell("not submitted", notSubmitted) : null,
      cell("ETA", batch.state === "done" || batch.state === "failed" ? "–" : clock(batch.etaSeconds)),
      cell("agent time", batch.agentSeconds.toFixed(1) + " s"),
      cell("chunks reused", `${batch.reusedChunks} of ${batch.chunks}`)].filter((node) => node !== null));
    body.replaceChildren(...(batch.rowStatuses || []).map((row) => el("tr", { "data-row": row.row },
      el("td", { class: "num", text: row.row }),
      el("td", {}, el("a", { href: `#/jobs/${row.job}`, text: `job ${row.job}` })),
      el("td", {}, el("span", { class: "badge " + row.state, text: stateLabel(row.state) })),
      el("td", { class: "wide" }, progressBar(row)),
      el("td", { class: "num", text: `${row.reusedChunks}/${row.chunks}` }),
      el("td", { class: "num", text: row.agentSeconds.toFixed(1) }),
      el("td", { class: "num opt", text: row.outputBytes === undefined || row.outputBytes === null ? "–" : row.outputBytes }),
      el("td", { class: "wrap error", text: row.error || "" }))));
  }

  // ---- views ----
  function show(view) {
    for (const id of ["login", "jobs-view", "job-view", "batch-view", "agents-view"]) $(id).hidden = id !== view;
    $("nav-jobs").classList.toggle("current", view === "jobs-view" || view === "job-view" || view === "batch-view");
    $("nav-agents").classList.toggle("current", view === "agents-view");
  }

  function route() {
    if (!state.token) return show("login");
    const hash = location.hash || "#/jobs";
    let match;
    if ((match = hash.match(/^#\/jobs\/(\d+)$/))) {
      const job = parseInt(match[1], 10);
      if (!state.route || state.route.job !== job) {
        state.job = null; state.events = []; state.jobSeen = null; state.posterKey = null;
        $("poster").hidden = true;
        stopPreview();
      }
      state.route = { view: "job", job };
      show("job-view");
      renderJob();
      refreshJob(true);
    } else if ((match = hash.match(/^#\/batches\/(\d+)$/))) {
      const batch = parseInt(match[1], 10);
      if (!state.route || state.route.batch !== batch) state.batch = null;
      state.route = { view: "batch", batch };
      show("batch-view");
      renderBatch();
      refreshBatch();
    } else if (hash === "#/agents") {
      state.route = { view: "agents" };
      show("agents-view");
      refreshCoordinators();
    } else {
      state.route = { view: "jobs" };
      show("jobs-view");
    }
    renderJobs();
    renderAgents();
  }

  function filteredJobs() {
    const f = state.filter;
    if (!f) return state.jobs;
    if (f === "active") return state.jobs.filter((job) => !ended(job));
    return state.jobs.filter((job) => job.state === f);
  }

  function renderJobs() {
    const body = $("jobs").tBodies[0];
    const jobs = filteredJobs();
    body.replaceChildren(...jobs.map((job) => el("tr", { "data-job-id": job.id, onclick: () => { location.hash = `#/jobs/${job.id}`; } },
      el("td", { class: "num c-id", text: job.id }),
      el("td", { class: "c-name" }, el("a", { href: `#/jobs/${job.id}`, text: job.name })),
      el("td", { class: "c-state" }, stateBadge(job)),
      el("td", { class: "wide c-progress" }, progressBar(job)),
      el("td", { class: "num lab", "data-label": "fps", text: fps(job.framesPerSecond) }),
      el("td", { class: "num lab", "data-label": "ETA", text: ended(job) ? "–" : clock(job.etaSeconds) }),
      el("td", { class: "opt", text: when(job.submittedAtMillis) }),
      el("td", { class: "num lab", "data-label": "priority", text: job.priority }),
      el("td", { class: "acts" }, actionButtons(job, true)))));
    $("jobs-empty").hidden = state.jobs.length > 0;
  }

  async function refreshJob(force) {
    if (!state.route || state.route.view !== "job") return;
    if (state.loadingJob && !force) { state.jobReload = true; return; }
    state.loadingJob = true;
    const id = state.route.job;
    try {
      const detail = await api(`/api/v1/jobs/${id}`);
      const after = state.events.length ? state.events[state.events.length - 1].id : 0;
      const page = await api(`/api/v1/jobs/${id}/events?after=${after}`);
      if (!state.route || state.route.job !== id) return;
      state.job = detail;
      state.jobSeen = JSON.stringify(detail.job);
      state.events = state.events.concat(page.events);
      renderJob();
      refreshPoster(id, detail.job.tasks.done).catch(() => {});
      refreshPreview(id, detail).catch(() => {});
    } catch (error) {
      if (error instanceof Unauthorized) return signOut(error.message);
      $("job-title").textContent = `Job ${id}`;
      $("job-summary").replaceChildren(el("p", { class: "error", text: error.message }));
    } finally {
      state.loadingJob = false;
      if (state.jobReload) { state.jobReload = false; refreshJob(false); }
    }
  }

  // The job's newest finished frame: fetched (with the token, so as a blob) when the number of
  // done chunks changes, since agents send one with each chunk.
  async function refreshPoster(id, done) {
    const key = `${id}:${done}`;
    if (state.posterKey === key) return;
    state.posterKey = key;
    const response = await fetch(`/api/v1/jobs/${id}/poster`, { headers: { "Authorization": "Bearer " + state.token }, cache: "no-store" });
    if (!state.route || state.route.job !== id) return;
    if (!response.ok) { $("poster").hidden = true; return; }
    const image = $("poster-image");
    if (image.dataset.url) URL.revokeObjectURL(image.dataset.url);
    image.dataset.url = URL.createObjectURL(await response.blob());
    image.src = image.dataset.url;
    $("poster").hidden = false;
  }

  // ---- watching the render ----
  // The job's chunks as an HLS playlist, played natively by the <video> (no player library):
  // it starts once the first chunk is done. While the job runs the playlist is the job's whole
  // timeline, and a chunk not rendered yet is sent once it is, so the player waits there
  // (buffering) and plays on. A media element cannot send the Authorization header, so the
  // token goes in the address (`?token=`), which the coordinator accepts on these routes only.
  // The element's state is mirrored in data- attributes (ready state, current time, the first
  // time it played at) for the eye and for the browser test.
  function stopPreview() {
    const video = $("preview-video");
    state.previewJob = null;
    video.removeAttribute("src");
    video.load();
    video.hidden = false;
    $("preview").hidden = true;
    for (const key of ["readyState", "currentTime", "firstTime", "error", "unplayable"]) delete $("preview").dataset[key];
  }

  // A job whose codec no browser decodes (ProRes, a PNG sequence) has no preview: the
  // playlist answers 415 with the reason, which the caption shows in place of the player.
  async function refreshPreview(id, detail) {
    const chunks = detail.chunks.filter((chunk) => chunk.kind === "video_chunk").sort((a, b) => a.frameStart - b.frameStart);
    if (!chunks.length || chunks[0].state !== "done" || state.previewJob === id) { updatePreviewCaption(); return; }
    state.previewJob = id;
    const video = $("preview-video"), figure = $("preview");
    const path = `/api/v1/jobs/${id}/preview.m3u8`;
    const probe = await fetch(path, { headers: { "Authorization": "Bearer " + state.token }, cache: "no-store" }).catch(() => null);
    if (state.previewJob !== id) return;
    if (probe && probe.status === 415) {
      const answer = await probe.json().catch(() => ({}));
      figure.dataset.unplayable = answer.error || "browsers cannot play this job's video";
      video.hidden = true;
      figure.hidden = false;
      $("preview-caption").textContent = "No preview: " + figure.dataset.unplayable;
      return;
    }
    video.hidden = false;
    video.src = `${path}?token=${encodeURIComponent(state.token)}`;
    figure.hidden = false;
    video.play().catch(() => {});
    updatePreviewCaption();
  }

  function updatePreviewCaption() {
    const detail = state.job, figure = $("preview"), video = $("preview-video");
    if (!detail || figure.hidden || figure.dataset.unplayable !== undefined) return;
    figure.dataset.readyState = String(video.readyState);
    figure.dataset.currentTime = video.currentTime.toFixed(3);
    const chunks = detail.chunks.filter((chunk) => chunk.kind === "video_chunk").sort((a, b) => a.frameStart - b.frameStart);
    let ready = 0;
    while (ready < chunks.length && chunks[ready].state === "done") ready++;
    if (video.error) {
      figure.dataset.error = video.error.message || String(video.error.code);
      // A player that loaded the job's timeline while it ran stops where the job did.
      $("preview-caption").textContent = ended(detail.job) && ready < chunks.length
        ? `The job is ${detail.job.state}: the preview ends with the ${ready} chunks finished before it did`
        : "The preview cannot play here: " + figure.dataset.error;
      return;
    }
    const whole = ended(detail.job) && ready === chunks.length;
    // Playing past the rendered chunks, the player waits for the next one.
    const waiting = !whole && !video.paused && video.readyState < 3 && video.currentTime > 0;
    $("preview-caption").textContent = (whole ? "The whole result" : `Finished chunks: ${ready} of ${chunks.length}`)
      + " (picture only) · " + clock(video.currentTime) + (isFinite(video.duration) ? " / " + clock(video.duration) : "")
      + (waiting ? " · waiting for the next chunk to render" : "");
  }

  for (const event of ["loadeddata", "playing", "timeupdate", "waiting", "pause", "ended", "error", "durationchange"]) {
    $("preview-video").addEventListener(event, () => {
      const video = $("preview-video");
      if (event === "playing" && $("preview").dataset.firstTime === undefined) $("preview").dataset.firstTime = video.currentTime.toFixed(3);
      updatePreviewCaption();
    });
  }

  // A cost with its agent time: "0.0213 (91.8 agent-s)"; the agent time alone without a price.
  function costText(cost, agentSeconds) {
    if (agentSeconds === undefined || agentSeconds === null) return "–";
    const seconds = `${agentSeconds.toFixed(1)} agent-s`;
    if (cost === undefined || cost === null) return seconds;
    return `${cost >= 1 || cost === 0 ? cost.toFixed(2) : cost.toPrecision(4)} (${seconds})`;
  }

  function chunkName(chunk) {
    return chunk.kind === "video_chunk" ? `chunk ${chunk.ordinal}` : chunk.kind;
  }

  function renderJob() {
    const detail = state.job;
    if (!detail) { $("job-title").textContent = `Job ${state.route.job}`; return; }
    const job = detail.job;
    $("job-title").textContent = `${job.name} (#${job.id})`;
    $("job-state").replaceChildren(...stateBadge(job));
    const t = job.tasks;
    const item = (label, value) => el("div", {}, el("b", { text: label }), value);
    $("job-summary").replaceChildren(
      item("Progress", progressBar(job)),
      item("Frames", `${job.framesDone} / ${job.frameCount}`),
      item("Chunks", `${t.done} done` + (t.reused ? ` (${t.reused} reused)` : "") + ` · ${t.running} running · ${t.queued} queued`
        + (t.failed ? ` · ${t.failed} failed` : "")),
      item("Frames/s", fps(job.framesPerSecond)),
      item("ETA", ended(job) ? "–" : clock(job.etaSeconds)),
      item(ended(job) ? "Cost" : "Cost so far", costText(job.cost, job.agentSeconds)),
      item("Submitted", when(job.submittedAtMillis)),
      item("Priority", String(job.priority)),
      ...(job.error ? [item("Error", el("span", { class: "error", text: job.error }))] : []));
    $("job-actions").replaceChildren(...actionButtons(job, false));
    $("strip").replaceChildren(...detail.chunks.map((chunk) => el("span", {
      class: "cell " + chunk.state + (chunk.attempts > 1 ? " retried" : ""), "data-task": chunk.task, "data-state": chunk.state,
      title: `${chunkName(chunk)}: ${chunk.state}` + (chunk.agent ? ` on ${chunk.agent}` : "") + `, attempt ${chunk.attempts}/${chunk.maxAttempts}`,
    })));
    $("chunks").tBodies[0].replaceChildren(...detail.chunks.map((chunk) => el("tr", { "data-task": chunk.task },
      el("td", { text: chunkName(chunk) }),
      el("td", { class: "opt", text: chunk.kind === "video_chunk" ? `${chunk.frameStart}–${chunk.frameEnd - 1}` : "–" }),
      el("td", {}, el("span", { class: "badge " + chunk.state, text: chunk.state === "leased" ? "rendering" : chunk.state })),
      el("td", { text: chunk.agent || "–" }),
      el("td", { class: "num", text: `${chunk.attempts}/${chunk.maxAttempts}` }),
      el("td", { class: "opt", text: when(chunk.startedAtMillis) }),
      el("td", { class: "opt", text: when(chunk.finishedAtMillis) }),
      el("td", { class: "num", text: fps(chunk.framesPerSecond) }),
      el("td", { class: "num", text: costText(chunk.cost, chunk.agentSeconds) }),
      el("td", { class: "wrap error", text: chunk.error || "" }))));
    $("events").tBodies[0].replaceChildren(...state.events.slice().reverse().map((event) => el("tr", {},
      el("td", { text: when(event.atMillis) }),
      el("td", { text: stateLabel(event.kind) }),
      el("td", { text: event.taskLabel || "–" }),
      el("td", { text: event.agent || "–" }),
      el("td", { class: "wrap", text: event.message }))));
  }

  function renderAgents() {
    const body = $("agents").tBodies[0];
    body.replaceChildren(...state.agents.map((agent) => el("tr", { "data-agent": agent.name },
      el("td", { class: "c-name", text: agent.name }),
      el("td", { class: "opt", text: agent.host }),
      el("td", { class: "c-state" }, el("span", { class: "badge " + agent.state, text: agent.state })),
      el("td", { class: "num lab", "data-label": "threads", text: agent.threads }),
      el("td", { class: "num lab", "data-label": "heartbeat", text: age(agent.heartbeatAgeSeconds) }),
      el("td", { class: "c-full", text: agent.currentTask || "–" }),
      el("td", { class: "num lab", "data-label": "failures", text: agent.failures ?? "–" }),
      el("td", { class: "opt", text: (agent.encoders || []).join(", ") || "–" }),
      el("td", { class: "wrap error c-full", text: [agent.quarantinedUntilMillis ? `quarantined until ${when(agent.quarantinedUntilMillis)}` : null,
                                            agent.lastError].filter(Boolean).join("; ") }))));
    $("agents-empty").hidden = state.agents.length > 0;
  }

  // Every coordinator sharing the farm's database (the live feed carries agents, not these).
  async function refreshCoordinators() {
    try { state.coordinators = (await api("/api/v1/agents")).coordinators || []; } catch (error) { return; }
    renderCoordinators();
  }

  function renderCoordinators() {
    const body = $("coordinators").tBodies[0];
    body.replaceChildren(...(state.coordinators || []).map((c) => el("tr", { "data-coordinator": c.id },
      el("td", { class: "c-name", text: c.address + (c.answering ? " (this one)" : "") }),
      el("td", { class: "opt", text: c.host }),
      el("td", { class: "c-state" }, el("span", { class: "badge " + c.state, text: c.state })),
      el("td", { class: "num lab", "data-label": "heartbeat", text: age(c.heartbeatAgeSeconds) }),
      el("td", { text: when(c.startedAtMillis) }))));
  }

  // ---- start ----
  $("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const token = $("token-input").value.trim();
    $("token-input").value = "";
    if (token) signIn(token);
  });
  $("logout").addEventListener("click", () => signOut(""));
  $("job-filter").addEventListener("change", (event) => { state.filter = event.target.value; renderJobs(); });
  window.addEventListener("hashchange", () => {
    if (/token=/.test(location.hash)) { takeTokenFromAddress(); signIn(sessionStorage.getItem(KEY)); } else route();
  });

  takeTokenFromAddress();
  const saved = sessionStorage.getItem(KEY);
  if (saved) signIn(saved); else show("login");
})();
