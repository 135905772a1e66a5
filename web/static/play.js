// The play page (web/static/play.html): a live game against an agent over the websocket /play/ws (the messages of
// web/protocol.py). The server sends what the human's team sees, one frame per env step; the page draws the frames
// with the replay viewer's renderer (map.js: the map, the units, the fog, the labels, the hero panel, the event log's
// sentences), moving the units smoothly between the last two frames, in a camera view around the human's hero and in a
// minimap of the whole map. Every click and key becomes an `order` message; the server judges it with the action
// masks an agent's actions go through, and answers `order` messages (accepted, refused with the reason, ended).
//
// window.play is the page's state, for people (the console) and for the browser tests: play.state {connected, game,
// t, paused, speed, over, armed, follow, span}; play.you (the `started` message's "you"); play.frame (the latest
// frame); play.notes (every `order` answer); play.events (every event shown); play.end (the `end` message);
// play.errors (every `error` message); play.drawn (the units of the last render: {id, team, type, hero, x, y, px,
// py}, px and py in the view canvas's pixels); play.toClient(x, y): a map point's position in the window (CSS
// pixels, for mouse events); play.stats {renders, frames}; play.start(fields), play.send(message).
(function () {
  "use strict";

  const $ = (id) => document.getElementById(id);
  const view = $("view");
  const vctx = view.getContext("2d");
  const mini = $("minimap");
  const mctx = mini.getContext("2d");
  const TELEPORT_UNITS = 600; // a unit that moved further between two frames jumped (respawn, teleport, blink)
  const ZOOM = { min: 1600, max: 8000, start: 3200, factor: 1.15 }; // the camera's side in map units
  const MINI = 260; // the minimap's side in CSS pixels
  const MINI_UNIT_SCALE = 0.5; // units on the minimap: half their size on the map
  const PAN_FRACTION = 0.25; // an arrow key moves the camera by this share of its side
  const ABILITY_KEYS = ["q", "w", "e", "r"];
  const HIT_PX = { hero: 11, building: 10, other: 7 }; // how near the cursor a unit is under it, CSS pixels

  const state = { connected: false, game: null, t: 0, paused: false, speed: 1, over: false, armed: null,
    follow: true, span: ZOOM.start, cx: 0, cy: 0 };
  let options = null; // GET /play/options
  let socket = null;
  let M = null; // the renderer of the game (map.js)
  let H = null; // its header
  let you = null;
  let team = 0;
  let stepMs = 133;
  let prev = null, cur = null, arrived = 0; // the last two frames and when the last one came
  let panel = null;
  let keyOf = {}; // key -> action name
  let miniBackground = null;
  let size = 700, dpr = window.devicePixelRatio || 1;
  let drawn = [];
  let lastKey = { key: null, at: 0 };
  const notes = [], events = [], errors = [];
  const stats = { renders: 0, frames: 0 };

  // ---- the socket --------------------------------------------------------------------------------------------------
  function connect() {
    socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/play/ws");
    socket.addEventListener("open", () => {
      state.connected = true;
      const game = new URLSearchParams(location.search).get("game");
      if (game) send({ type: "join", game: game }); else showSetup();
    });
    socket.addEventListener("message", (ev) => onMessage(JSON.parse(ev.data)));
    socket.addEventListener("close", () => {
      state.connected = false;
      if (!state.over && state.game) {
        banner("connection to the server lost: reload the page to take the game back (it waits 30 s)");
      } else if (!state.over) {
        banner("connection to the server lost: is python -m app.web still running?");
      }
    });
  }

  function send(msg) {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(msg));
  }

  function onMessage(m) {
    switch (m.type) {
      case "started": return onStarted(m);
      case "frame": return onFrame(m);
      case "order": return onNote(m);
      case "state": return onState(m);
      case "end": return onEnd(m);
      case "error": return onError(m);
      default: return null;
    }
  }

  function banner(text) { $("banner").textContent = text || ""; }

  // ---- a game ------------------------------------------------------------------------------------------------------
  function onStarted(m) {
    H = m.header;
    M = window.openfiveMap(H);
    you = m.you;
    team = M.SIDES.indexOf(you.side);
    stepMs = m.step_s * 1000;
    state.game = m.game;
    state.over = false;
    state.armed = null;
    state.follow = true;
    prev = cur = null;
    history.replaceState(null, "", "/play?game=" + encodeURIComponent(m.game));
    $("setup").hidden = true;
    $("end").hidden = true;
    banner("");
    $("result").textContent = "";
    $("title").textContent = H.mode + ": you (" + you.hero + ", " + you.side + ") vs " + H.agents[M.SIDES[1 - team]];
    buildPanel();
    buildLog();
    buildBar();
    layout();
    onState({ paused: m.paused, speed: m.speed });
    onFrame(m.frame);
    document.body.dataset.ready = "game";
  }

  function onFrame(f) {
    prev = cur;
    cur = f;
    arrived = performance.now();
    stats.frames++;
    state.t = f.t;
    for (const e of f.events) addEvent(e);
    panel.update(f);
    updateBar(f.me);
    $("clock").textContent = M.fmt(f.t) + " / " + M.fmt(H.time_limit_s) + (state.paused ? " (paused)" : "");
  }

  function onNote(n) {
    notes.push(n);
    const line = $("order");
    line.textContent = "";
    const span = document.createElement("span");
    span.className = n.status;
    span.textContent = label(n.action) + ": " + n.status + (n.reason ? " (" + n.reason + ")" : "");
    line.appendChild(span);
  }

  function onState(s) {
    state.paused = s.paused;
    state.speed = s.speed;
    $("pause").textContent = s.paused ? "resume" : "pause";
    $("pause").classList.toggle("on", s.paused);
    for (const b of document.querySelectorAll("[data-speed]")) {
      b.classList.toggle("on", parseFloat(b.dataset.speed) === s.speed);
    }
    if (cur) $("clock").textContent = M.fmt(cur.t) + " / " + M.fmt(H.time_limit_s) + (s.paused ? " (paused)" : "");
  }

  function onEnd(m) {
    play.end = m;
    state.over = true;
    state.game = null;
    state.armed = null;
    history.replaceState(null, "", "/play");
    const title = m.you === "quit" ? "You left the game" : m.you === "draw" ? "No winner: the time limit"
      : (m.you === "won" ? "You won" : "You lost") + ": " + m.winner + " wins";
    $("end-title").textContent = title;
    $("result").textContent = title;
    $("end-detail").textContent = "at " + M.fmt(m.game_time_s || 0) + " of game time"
      + (m.summary ? "; buildings destroyed: radiant " + total(m.summary.destroyed_by.radiant) + ", dire "
        + total(m.summary.destroyed_by.dire) : "");
    const body = document.querySelector("#summary tbody");
    body.textContent = "";
    for (const h of (m.summary ? m.summary.heroes : [])) {
      const tr = document.createElement("tr");
      const cells = [h.hero + (h.slot === you.slot ? " (you)" : ""), h.team, h.level,
        h.kills + "/" + h.deaths + "/" + h.assists, h.last_hits + "/" + h.denies, Math.round(h.gold_earned),
        h.items.map((i) => i.replace(/_/g, " ")).join(", ")];
      cells.forEach((c, k) => {
        const td = document.createElement("td");
        td.textContent = c;
        if (k === 0) td.className = "team-" + M.SIDES.indexOf(h.team);
        if (k === 6) td.className = "items";
        tr.appendChild(td);
      });
      body.appendChild(tr);
    }
    $("end-replay").textContent = m.replay;
    $("end-view").textContent = m.view;
    $("end").hidden = false;
    document.body.dataset.ready = "end";
  }

  function total(d) { return d.towers + d.barracks + d.shrines; }

  function onError(m) {
    errors.push(m);
    const text = (m.field ? m.field + ": " : "") + m.message;
    if (!state.game) {
      if (m.field === "game") history.replaceState(null, "", "/play"); // a game to join that is not there
      banner("");
      showSetup();
      $("setup-error").textContent = text;
      $("start").disabled = false;
    } else {
      banner(text);
    }
  }

  // ---- the setup form ------------------------------------------------------------------------------------------
  async function loadOptions() {
    options = await (await fetch("/play/options")).json();
    fill($("mode"), options.modes, "1v1");
    fill($("side"), options.sides, "radiant");
    const list = $("agents");
    for (const a of options.agents) list.appendChild(new Option(a, a));
    for (const m of options.models) list.appendChild(new Option(m.spec, m.spec + " (" + m.mode + ")"));
    $("mode").addEventListener("change", modeChanged);
    $("side").addEventListener("change", modeChanged);
    modeChanged();
  }

  function fill(select, values, chosen) {
    select.textContent = "";
    for (const v of values) select.appendChild(new Option(v, v, false, v === chosen));
  }

  function modeChanged() {
    const mode = $("mode").value;
    const slot = $("side").value === options.sides[0] ? 0 : options.team_size[mode];
    fill($("hero"), options.heroes, options.lineups[mode][slot]);
    $("allies-label").hidden = options.team_size[mode] === 1;
    $("minutes").value = String(Math.round(options.time_limit_s[mode] / 60));
    const model = options.models.find((m) => m.mode === mode); // the mode's shipped agent, if there is one
    $("opponent").value = $("allies").value = model ? model.spec : "scripted";
  }

  function showSetup() {
    $("end").hidden = true;
    $("setup").hidden = false;
    document.body.dataset.ready = "setup";
  }

  function start(fields) { // a start message from the form's fields (the tests call it with theirs)
    $("setup-error").textContent = "";
    $("start").disabled = true;
    banner("starting the game (a model takes a few seconds to load)...");
    send(Object.assign({ type: "start" }, fields));
    setTimeout(() => { $("start").disabled = false; }, 1000);
  }

  function formFields() {
    const mode = $("mode").value;
    const fields = { mode: mode, side: $("side").value, opponent: $("opponent").value.trim(), hero: $("hero").value,
      time_limit_s: 60 * parseFloat($("minutes").value || "0") };
    if (options.team_size[mode] > 1) fields.allies = $("allies").value.trim();
    if ($("seed").value !== "") fields.seed = parseInt($("seed").value, 10);
    return fields;
  }

  // ---- the hero panel and the event log (map.js, as the replay viewer's) -----------------------------------------
  function buildPanel() {
    const body = document.querySelector("#heroes tbody");
    body.textContent = "";
    panel = M.heroPanel(body, (slot) => {
      panel.rows.forEach((p, k) => p.tr.classList.toggle("selected", k === slot));
    });
    panel.rows[you.slot].tr.classList.add("you");
  }

  function buildLog() {
    const log = $("log");
    log.textContent = "";
    events.length = 0;
    groups = M.eventGroups();
    const filters = $("filters");
    filters.textContent = "";
    for (const [cls, text, , on] of M.GROUPS) {
      const box = document.createElement("input");
      box.type = "checkbox";
      box.checked = on;
      box.id = "filter-" + cls;
      log.classList.toggle("hide-" + cls, !on);
      box.addEventListener("change", () => log.classList.toggle("hide-" + cls, !box.checked));
      const lab = document.createElement("label");
      lab.appendChild(box);
      lab.appendChild(document.createTextNode(" " + text));
      filters.appendChild(lab);
    }
  }

  let groups = {}; // event type -> its log filter's class

  function addEvent(e) {
    events.push(e);
    const [text, side] = M.describe(e);
    const li = document.createElement("li");
    li.className = groups[e.type] + (side ? " team-" + M.SIDES.indexOf(side) : "");
    li.dataset.type = e.type;
    const when = document.createElement("span");
    when.className = "when";
    when.textContent = M.fmt(e.t);
    li.appendChild(when);
    li.appendChild(document.createTextNode(text));
    const log = $("log");
    const atEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
    log.appendChild(li);
    if (atEnd) log.scrollTop = log.scrollHeight;
  }

  // ---- the ability bar -----------------------------------------------------------------------------------------
  function label(action) {
    if (!you || !you.actions[action]) return action;
    const a = you.actions[action];
    return a.name === action ? action.replace(/^item_/, "").replace(/_/g, " ") : a.name.replace(/_/g, " ");
  }

  function itemActions() { return Object.keys(you.actions).filter((a) => a.startsWith("item_")); }

  function buildBar() {
    const bar = $("bar");
    bar.textContent = "";
    const keys = ABILITY_KEYS.map((k, i) => [k, "ability_" + (i + 1)]) // the bar's order: abilities, items, the rest
      .concat(itemActions().map((a, i) => [String(i + 1), a]), [["s", "stop"], ["b", "buyback"], ["g", "shrine"]]);
    keyOf = Object.fromEntries(keys);
    for (const [key, action] of keys) {
      const b = document.createElement("button");
      b.type = "button";
      b.dataset.action = action;
      b.innerHTML = "<b></b><span class=\"name\"></span><span class=\"cd\"></span>";
      b.querySelector("b").textContent = key.toUpperCase();
      b.querySelector(".name").textContent = label(action);
      b.title = action + (you.actions[action] ? " (target: " + you.actions[action].target.replace("_", " ") + ")"
        : "");
      b.addEventListener("click", () => press(key));
      bar.appendChild(b);
    }
  }

  function updateBar(me) {
    const row = cur && cur.heroes.find((h) => h[M.HF.slot] === you.slot);
    const held = new Set(row ? row[M.HF.items].map((k) => "item_" + H.items[k]) : []);
    const legal = new Set(me.legal);
    legal.add("stop");
    for (const b of $("bar").children) {
      const a = b.dataset.action;
      b.classList.toggle("legal", legal.has(a) || (a === "stop" && legal.has("move")));
      b.classList.toggle("armed", state.armed === a);
      b.classList.toggle("held", !a.startsWith("item_") || held.has(a));
      let cd = 0;
      if (a.startsWith("ability_")) cd = me.cooldowns[parseInt(a.slice(8), 10) - 1];
      else if (a.startsWith("item_")) cd = me.item_cooldowns[itemActions().indexOf(a)];
      b.querySelector(".cd").textContent = cd > 0 ? Math.ceil(cd) + "s" : "";
      if (a.startsWith("ability_")) {
        const lv = me.ability_levels[parseInt(a.slice(8), 10) - 1];
        b.querySelector(".name").textContent = label(a) + (lv ? " " + lv : " -");
      }
    }
  }

  // ---- orders --------------------------------------------------------------------------------------------------
  function order(action, target) { send(Object.assign({ type: "order", action: action }, target || {})); }

  function myHero(frame) {
    return frame && frame.units.find((u) => u[M.F.type] === M.TYPE.hero && u[M.F.hero] === you.slot);
  }

  function press(key) { // a key of the bar: cast now, or arm the action for a left-click on its target
    const action = keyOf[key];
    if (!action || !state.game) return;
    if (action === "stop" || action === "buyback" || action === "shrine") { state.armed = null; order(action); return; }
    const a = you.actions[action];
    const now = performance.now();
    const twice = lastKey.key === key && now - lastKey.at < 600 && state.armed === action;
    lastKey = { key: key, at: now };
    if (a.target === "no_target") {
      state.armed = null;
      order(action);
    } else if (twice && a.unit_kind === "ally") { // the same key twice: on yourself
      state.armed = null;
      const me = myHero(cur);
      if (me) order(action, { unit: me[M.F.id] });
    } else {
      state.armed = action;
    }
    view.classList.toggle("armed", state.armed !== null);
    if (cur) updateBar(cur.me);
  }

  function unitAt(px, py) { // the unit drawn nearest to a point of the view (CSS pixels), if it is under it
    let best = null, bestD = Infinity;
    for (const d of drawn) {
      const r = d.type === "hero" ? HIT_PX.hero : M.IS_BUILDING.has(M.TYPE[d.type]) ? HIT_PX.building : HIT_PX.other;
      const dist = Math.hypot(d.px / dpr - px, d.py / dpr - py);
      if (dist <= r && dist < bestD) { best = d; bestD = dist; }
    }
    return best;
  }

  function onViewMouse(ev) {
    if (!state.game || !V) return;
    const r = view.getBoundingClientRect();
    const px = ev.clientX - r.left, py = ev.clientY - r.top;
    const [x, y] = V.toMap(px, py);
    const unit = unitAt(px, py);
    if (ev.button === 2) { // right-click: attack an enemy (or deny an allied creep) under the cursor, else move
      ev.preventDefault();
      state.armed = null;
      view.classList.remove("armed");
      const creep = unit && (unit.type === "creep_melee" || unit.type === "creep_ranged");
      if (unit && (unit.team !== team || creep) && unit.hero !== you.slot) order("attack", { unit: unit.id });
      else order("move", { x: clampMap(x), y: clampMap(y) });
    } else if (ev.button === 0 && state.armed) { // left-click: the armed action's target
      const action = state.armed;
      state.armed = null;
      view.classList.remove("armed");
      const a = you.actions[action];
      if (["unit", "unit_offset", "teleport"].includes(a.target)) order(action, unit ? { unit: unit.id } : {});
      else order(action, { x: clampMap(x), y: clampMap(y) });
    } else if (ev.button === 0 && unit && unit.type === "hero") {
      panel.rows.forEach((p, k) => p.tr.classList.toggle("selected", k === unit.hero));
    }
    if (cur) updateBar(cur.me);
  }

  function clampMap(v) { return Math.max(0, Math.min(H.map_size, Math.round(v))); }

  function onMiniMouse(ev) {
    if (!state.game) return;
    ev.preventDefault();
    const r = mini.getBoundingClientRect();
    const [x, y] = MV.toMap(ev.clientX - r.left, ev.clientY - r.top);
    if (ev.button === 2) order("move", { x: clampMap(x), y: clampMap(y) });
    else if (ev.button === 0) { state.follow = false; state.cx = x; state.cy = y; }
  }

  function onKey(ev) {
    if (["INPUT", "SELECT", "TEXTAREA"].includes(ev.target.tagName) || !state.game) return;
    const key = ev.key.length === 1 ? ev.key.toLowerCase() : ev.key;
    const pan = state.span * PAN_FRACTION;
    const keys = {
      " ": () => send({ type: state.paused ? "resume" : "pause" }),
      "[": () => setSpeed(-1),
      "]": () => setSpeed(1),
      c: () => { state.follow = true; },
      Escape: () => { state.armed = null; view.classList.remove("armed"); },
      ArrowLeft: () => { state.follow = false; state.cx -= pan; },
      ArrowRight: () => { state.follow = false; state.cx += pan; },
      ArrowUp: () => { state.follow = false; state.cy += pan; },
      ArrowDown: () => { state.follow = false; state.cy -= pan; },
    };
    if (keys[key]) keys[key]();
    else if (keyOf[key]) press(key);
    else return;
    ev.preventDefault();
  }

  function setSpeed(step) {
    const speeds = [0.5, 1, 2];
    const k = Math.max(0, Math.min(speeds.length - 1, speeds.indexOf(state.speed) + step));
    send({ type: "speed", speed: speeds[k] });
  }

  // ---- drawing -------------------------------------------------------------------------------------------------
  let V = null; // the camera's view
  let MV = null; // the minimap's view

  function layout() {
    dpr = window.devicePixelRatio || 1;
    const avail = Math.min(window.innerHeight - 190, window.innerWidth - 440);
    size = Math.max(420, Math.min(900, Math.floor(avail)));
    for (const [c, s] of [[view, size], [mini, MINI]]) {
      c.style.width = s + "px";
      c.style.height = s + "px";
      c.width = Math.round(s * dpr);
      c.height = Math.round(s * dpr);
    }
    $("keys").style.maxWidth = size + "px";
    $("bar").style.maxWidth = size + "px";
    if (M) {
      MV = M.view(MINI, dpr);
      miniBackground = M.background(MV, mini);
      miniDrawn.frames = -1;
    }
  }

  function interpolated() { // the units of the frame now: the last frame's, moved from where the one before had them
    const f = state.paused || !prev ? 1 : Math.max(0, Math.min(1, (performance.now() - arrived)
      / (stepMs / state.speed)));
    const before = new Map();
    if (prev && f < 1) for (const u of prev.units) before.set(u[M.F.id], u);
    return cur.units.map((u) => {
      const p = before.get(u[M.F.id]);
      if (!p || !u[M.F.alive] || !p[M.F.alive]) return [u, u[M.F.x], u[M.F.y]];
      const dx = u[M.F.x] - p[M.F.x], dy = u[M.F.y] - p[M.F.y];
      if (Math.hypot(dx, dy) >= TELEPORT_UNITS) return [u, u[M.F.x], u[M.F.y]];
      return [u, p[M.F.x] + dx * f, p[M.F.y] + dy * f];
    });
  }

  function render() {
    requestAnimationFrame(render);
    if (!cur || !M) return;
    stats.renders++;
    const units = interpolated();
    const mine = units.find(([u]) => u[M.F.type] === M.TYPE.hero && u[M.F.hero] === you.slot);
    if (state.follow && mine && mine[0][M.F.alive]) { state.cx = mine[1]; state.cy = mine[2]; }
    const span = state.span, MAP = H.map_size;
    state.cx = Math.max(span / 2, Math.min(MAP - span / 2, state.cx));
    state.cy = Math.max(span / 2, Math.min(MAP - span / 2, state.cy));
    V = M.view(size, dpr, state.cx - span / 2, state.cy - span / 2, span);
    // the camera view
    vctx.setTransform(1, 0, 0, 1, 0, 0);
    vctx.fillStyle = "#15181d";
    vctx.fillRect(0, 0, view.width, view.height);
    vctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    M.paintBackground(vctx, V);
    M.drawFog(vctx, view, V, cur.units, team);
    vctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    drawn = [];
    const heroes = [], buildings = [];
    const margin = 30;
    const ordered = units.slice().sort((a, b) => M.LAYER(a[0][M.F.type]) - M.LAYER(b[0][M.F.type]));
    for (const [u, x, y] of ordered) {
      const building = M.IS_BUILDING.has(u[M.F.type]);
      if (!u[M.F.alive] && !building) continue;
      const px = V.sx(x), py = V.sy(y);
      if (px < -margin || py < -margin || px > size + margin || py > size + margin) continue;
      const visible = M.visibleTo(u, team);
      M.drawUnit(vctx, u, px, py, !visible, you.slot);
      if (building) {
        const s = M.buildingSide(u[M.F.type]);
        buildings.push([px - s / 2, py - s / 2 - 7, px + s / 2, py + s / 2]);
      }
      if (u[M.F.type] === M.TYPE.hero) heroes.push({ slot: u[M.F.hero], px: px, py: py });
      if (visible && u[M.F.alive]) {
        drawn.push({ id: u[M.F.id], team: u[M.F.team], type: H.unit_types[u[M.F.type]], hero: u[M.F.hero], x: x,
          y: y, px: Math.round(px * dpr), py: Math.round(py * dpr) });
      }
    }
    drawOrder(mine);
    M.drawLabels(vctx, M.placeLabels(vctx, cur, heroes, buildings, size, you.slot), you.slot);
    if (state.armed) {
      vctx.fillStyle = "rgba(10,12,16,0.75)";
      vctx.fillRect(8, 8, 330, 20);
      vctx.fillStyle = "#f3c969";
      vctx.font = "12px system-ui, sans-serif";
      vctx.textAlign = "left";
      vctx.fillText(label(state.armed) + ": left-click its target (Esc cancels)", 14, 22);
    }
    const camera = [V.x0, V.y0, V.span].join();
    if (stats.frames !== miniDrawn.frames || camera !== miniDrawn.camera) { // the minimap: once per server frame
      renderMinimap(units);
      miniDrawn.frames = stats.frames;
      miniDrawn.camera = camera;
    }
  }

  const miniDrawn = { frames: -1, camera: "" };

  function drawOrder(mine) { // where the hero's move order goes
    const o = cur.me.order;
    if (!o || !mine || o.x === undefined) return;
    const px = V.sx(o.x), py = V.sy(o.y);
    vctx.strokeStyle = "#5fd08d";
    vctx.lineWidth = 2;
    vctx.beginPath();
    vctx.moveTo(px - 5, py - 5); vctx.lineTo(px + 5, py + 5);
    vctx.moveTo(px + 5, py - 5); vctx.lineTo(px - 5, py + 5);
    vctx.stroke();
  }

  function renderMinimap(units) {
    mctx.setTransform(1, 0, 0, 1, 0, 0);
    mctx.drawImage(miniBackground, 0, 0);
    M.drawFog(mctx, mini, MV, cur.units, team);
    mctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    for (const [u, x, y] of units) {
      if (!u[M.F.alive] && !M.IS_BUILDING.has(u[M.F.type])) continue;
      mctx.save();
      mctx.translate(MV.sx(x), MV.sy(y));
      mctx.scale(MINI_UNIT_SCALE, MINI_UNIT_SCALE);
      M.drawUnit(mctx, u, 0, 0, !M.visibleTo(u, team), you.slot);
      mctx.restore();
    }
    // the camera's square
    mctx.strokeStyle = "rgba(255,255,255,0.8)";
    mctx.lineWidth = 1;
    mctx.strokeRect(MV.sx(V.x0), MV.sy(V.y0 + V.span), MV.units(V.span), MV.units(V.span));
  }

  // ---- start ---------------------------------------------------------------------------------------------------
  function bind() {
    view.addEventListener("contextmenu", (ev) => ev.preventDefault());
    mini.addEventListener("contextmenu", (ev) => ev.preventDefault());
    view.addEventListener("mousedown", onViewMouse);
    mini.addEventListener("mousedown", onMiniMouse);
    view.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const k = ev.deltaY > 0 ? ZOOM.factor : 1 / ZOOM.factor;
      state.span = Math.max(ZOOM.min, Math.min(ZOOM.max, state.span * k));
    }, { passive: false });
    window.addEventListener("keydown", onKey);
    window.addEventListener("resize", layout);
    $("pause").addEventListener("click", () => send({ type: state.paused ? "resume" : "pause" }));
    for (const b of document.querySelectorAll("[data-speed]")) {
      b.addEventListener("click", () => send({ type: "speed", speed: parseFloat(b.dataset.speed) }));
    }
    $("center").addEventListener("click", () => { state.follow = true; });
    $("quit").addEventListener("click", () => send({ type: "quit" }));
    $("setup").addEventListener("submit", (ev) => { ev.preventDefault(); start(formFields()); });
    $("again").addEventListener("click", showSetup);
  }

  const play = {
    state: state, notes: notes, events: events, errors: errors, stats: stats, end: null,
    get you() { return you; },
    get frame() { return cur; },
    get drawn() { return drawn; },
    toClient: (x, y) => {
      const r = view.getBoundingClientRect();
      return [r.left + V.sx(x), r.top + V.sy(y)];
    },
    start: start, send: send,
  };
  window.play = play;
  bind();
  layout();
  loadOptions().then(connect);
  requestAnimationFrame(render);
})();
