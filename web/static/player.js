// A player's private page: shows this player's own secrets and choices, nothing of anyone else's.
"use strict";
(function () {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const token = JSON.parse(document.getElementById("player-token").textContent);
  const $ = (id) => document.getElementById(id);

  function toast(message, isError) {
    const t = $("toast");
    t.textContent = message; t.className = "toast" + (isError ? " error" : ""); t.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => { t.hidden = true; }, 4000);
  }

  function render(v) {
    $("turn").textContent = v.to_act ? "Your choice, " + v.name : "Waiting: " + v.turn;
    $("waiting").textContent = v.waiting_for.length ? "Still to act: " + v.waiting_for.join(", ") : "";
    const box = $("choices");
    box.replaceChildren();
    for (const a of v.actions) {
      const b = document.createElement("button");
      b.type = "button"; b.textContent = a;
      b.addEventListener("click", () => commit(a));
      box.appendChild(b);
    }
    const mine = $("mine");
    mine.replaceChildren();
    for (const m of v.mine.slice().reverse()) {
      const li = document.createElement("li");
      li.value = m.index;
      li.textContent = m.text + (m.sealed ? " (sealed: the table sees it when everyone has committed)" : "");
      mine.appendChild(li);
    }
    document.body.dataset.ready = "1";
  }

  async function refresh() {
    const r = await fetch("/api/secret/" + encodeURIComponent(token), { credentials: "same-origin" });
    if (r.ok) render(await r.json());
  }

  async function commit(action) {
    const r = await fetch("/api/secret/" + encodeURIComponent(token), {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify({ action: action }),
    });
    const data = await r.json().catch(() => ({}));
    if (!r.ok) { toast(data.error || "error " + r.status, true); return; }
    toast("committed: " + action);
    render(data.view);
  }

  refresh();
  const events = new EventSource("/events");
  events.addEventListener("state", () => refresh());
})();
