// The set-up page: game, variant, players in seat order, the a1 corner; then start.
"use strict";
(function () {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const $ = (id) => document.getElementById(id);
  const players = $("players");

  function toast(message) {
    const t = $("toast"); t.textContent = message; t.className = "toast error"; t.hidden = false;
    setTimeout(() => { t.hidden = true; }, 6000);
  }
  function addPlayer() {
    const n = players.children.length + 1;
    const label = document.createElement("label");
    label.textContent = "P" + n + " ";
    const input = document.createElement("input");
    input.name = "player"; input.value = "Player " + n; input.maxLength = 40;
    label.appendChild(input);
    players.appendChild(label);
  }
  function gameChanged() {
    const opt = $("game").selectedOptions[0];
    $("variant").replaceChildren(...opt.dataset.variants.split(",").map((v) => new Option(v, v)));
    const min = Number(opt.dataset.min), max = Number(opt.dataset.max);
    while (players.children.length < min) addPlayer();
    while (players.children.length > max) players.lastChild.remove();
  }
  async function send(url, body) {
    const r = await fetch(url, { method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf }, body: JSON.stringify(body) });
    const data = await r.json().catch(() => ({}));
    if (!r.ok) { toast(data.error || "error " + r.status); return; }
    location.href = "/";
  }
  $("game").addEventListener("change", gameChanged);
  $("add-player").addEventListener("click", addPlayer);
  $("remove-player").addEventListener("click", () => { if (players.children.length > 1) players.lastChild.remove(); });
  $("setup").addEventListener("submit", (e) => {
    e.preventDefault();
    send("/api/setup", { game: $("game").value, variant: $("variant").value,
      players: [...players.querySelectorAll("input")].map((i) => i.value),
      a1_corner: $("a1_corner").value, seed: Number($("seed").value) || 0 });
  });
  $("import").addEventListener("submit", (e) => { e.preventDefault(); send("/api/import", { record: $("record").value }); });

  // Calibration: the latest camera picture (grid drawn by the pipeline), and the a1 corner.
  function showCorner(value) {
    $("a1_corner").value = value;
    for (const b of document.querySelectorAll(".calibration .corner")) {
      const chosen = b.dataset.corner === value;
      b.classList.toggle("chosen", chosen);
      b.setAttribute("aria-pressed", chosen ? "true" : "false");
    }
  }
  for (const b of document.querySelectorAll(".calibration .corner")) {
    b.addEventListener("click", () => showCorner(b.dataset.corner));
  }
  $("a1_corner").addEventListener("change", () => showCorner($("a1_corner").value));
  if ($("save-corner")) {
    $("save-corner").addEventListener("click", async () => {
      const r = await fetch("/api/calibration", { method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
        body: JSON.stringify({ a1_corner: $("a1_corner").value }) });
      const data = await r.json().catch(() => ({}));
      if (!r.ok) { toast(data.error || "error " + r.status); return; }
      $("corner-in-play").textContent = "in play now: " + data.a1_corner;
    });
  }
  let lastFrame = null;
  async function refreshCamera() {
    const r = await fetch("/api/calibration", { credentials: "same-origin" });
    if (!r.ok) return;
    const c = await r.json();
    $("calibration").classList.toggle("manual", !c.has_frame);
    $("calibration-img").hidden = !c.has_frame;
    $("no-camera").hidden = c.has_frame;
    if (c.has_frame && c.frame_time !== lastFrame) {
      lastFrame = c.frame_time;
      $("calibration-img").src = "/video.jpg?t=" + c.frame_time;
    }
  }
  setInterval(refreshCamera, 2000);
  refreshCamera();
  gameChanged();
})();
