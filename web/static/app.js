// The table's page: renders the server's public view, sent on every change over SSE.
"use strict";
(function () {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const $ = (id) => document.getElementById(id);
  let view = JSON.parse($("initial-view").textContent);
  let filterText = "";

  function toast(message, isError) {
    const t = $("toast");
    t.textContent = message;
    t.className = "toast" + (isError ? " error" : "");
    t.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => { t.hidden = true; }, isError ? 6000 : 2500);
  }

  async function post(url, body) {
    const response = await fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(body || {}),
    });
    let data = {};
    try { data = await response.json(); } catch (e) { /* not JSON */ }
    if (!response.ok) { toast(data.error || ("error " + response.status), true); return null; }
    if (data.view) render(data.view);
    return data;
  }

  function button(text, onClick, cls) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    if (cls) b.className = cls;
    b.addEventListener("click", onClick);
    return b;
  }

  async function showPreview(action) {
    const r = await fetch("/api/preview?action=" + encodeURIComponent(action), { credentials: "same-origin" });
    const data = await r.json().catch(() => ({}));
    $("preview").textContent = r.ok ? action + " → " + (data.effects.join("; ") || "no effect") : (data.error || "");
  }

  function actionButtons(box, actions) {
    const shown = actions.filter((a) => a.toLowerCase().includes(filterText.toLowerCase())).slice(0, 120);
    for (const a of shown) {
      const b = button(a, () => post("/api/action", { action: a }).then((d) => d && toast(a + ": " + (d.effects.join("; ") || "done"))));
      b.addEventListener("mouseenter", () => showPreview(a));
      b.addEventListener("focus", () => showPreview(a));
      box.appendChild(b);
    }
    if (actions.length > shown.length) {
      const more = document.createElement("span");
      more.className = "muted small";
      more.textContent = (actions.length - shown.length) + " more: type to filter";
      box.appendChild(more);
    }
  }

  function renderControls(c) {
    const box = $("controls");
    box.replaceChildren();
    if (!c) return;
    const all = c.kind === "simultaneous" ? Object.values(c.per_seat).flat() : c.actions;
    if (all.length > 24) {
      const f = document.createElement("input");
      f.className = "filter"; f.placeholder = "filter moves…"; f.value = filterText;
      f.addEventListener("input", () => { filterText = f.value; renderControls(view.controls); $("controls").querySelector(".filter").focus(); });
      box.appendChild(f);
    }
    if (c.kind === "terminal") { box.textContent = "The game is over."; return; }
    if (c.kind === "chance") {
      box.appendChild(button("Roll for me", () => post("/api/roll"), "roll"));
      const note = document.createElement("span");
      note.className = "muted small"; note.textContent = "or enter the physical roll:";
      box.appendChild(note);
      actionButtons(box, c.actions);
      return;
    }
    if (c.kind === "seat") { actionButtons(box, c.actions); return; }
    for (const [seat, actions] of Object.entries(c.per_seat)) {
      const block = document.createElement("div");
      block.className = "seat-block";
      const head = document.createElement("div");
      head.className = "small";
      head.textContent = seat + " to commit — best on their private page; entering it here is sealed in the log:";
      block.appendChild(head);
      const details = document.createElement("details");
      const summary = document.createElement("summary");
      summary.textContent = "enter " + seat + "'s choice here";
      details.appendChild(summary);
      actionButtons(details, actions);
      block.appendChild(details);
      box.appendChild(block);
    }
  }

  function render(v) {
    if (!v || !v.game) return;
    if (v.game_id !== view.game_id) { view = v; location.reload(); return; }
    view = v;
    for (const key of ["board", "charts", "panels", "verdicts", "faults", "status"]) {
      const el = $(key);
      if (el && v.html[key] !== undefined && el.dataset.html !== v.html[key]) { el.innerHTML = v.html[key]; el.dataset.html = v.html[key]; }
    }
    $("log").innerHTML = v.html.log;
    $("log-count").textContent = v.log_count + " moves";
    $("source").textContent = v.source;
    $("undo").disabled = !v.log_count;
    $("camera").hidden = !v.has_frame;
    $("no-camera").hidden = v.has_frame;
    if (v.has_frame) $("camera-img").src = "/video.jpg?v=" + v.version;
    renderControls(v.controls);
    document.body.dataset.version = v.version;
  }

  document.addEventListener("click", (e) => {
    const t = e.target;
    if (t.classList.contains("fix")) post("/api/verdicts/" + t.dataset.verdict, { fix: t.dataset.fix });
    else if (t.classList.contains("dismiss")) post("/api/verdicts/" + t.dataset.verdict, { dismiss: true });
    else if (t.classList.contains("fix-log")) {
      const text = window.prompt("Correct move " + t.dataset.text + " to:", t.dataset.text);
      if (text && text !== t.dataset.text) post("/api/correct", { seq: Number(t.dataset.seq), action: text })
        .then((d) => d && toast(d.dropped.length ? "dropped, now illegal: " + d.dropped.join(", ") : "corrected"));
    }
  });
  $("undo").addEventListener("click", () => post("/api/undo").then((d) => d && toast("undone: " + d.undone)));

  async function loadLinks() {
    const list = $("player-links");
    if (!list) return;
    const r = await fetch("/api/links", { credentials: "same-origin" });
    if (!r.ok) return;
    const data = await r.json();
    list.replaceChildren();
    for (const p of data.players) {
      const li = document.createElement("li");
      const a = document.createElement("a");
      a.href = p.url; a.target = "_blank"; a.rel = "noopener"; a.textContent = p.seat + " " + p.name;
      li.appendChild(a);
      list.appendChild(li);
    }
    if (data.join && $("join-link")) $("join-link").textContent = data.join;
  }

  render(view);
  loadLinks();
  const events = new EventSource("/events");
  events.addEventListener("state", (e) => render(JSON.parse(e.data)));
})();
