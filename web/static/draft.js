// The draft page (web/draft.py): the user picks heroes in turns against the drafter, which picks by minimax on the
// model's lineup scores (Five app. D.2). Every number comes from the server (POST /draft/api/state): the page holds the
// picks, asks for the state after each one, and on the drafter's turn picks the server's recommendation.
// window.draft is the page's state (the browser tests read it).
"use strict";

(() => {
  const draft = window.draft = {
    setup: null,        // GET /draft/api/setup
    pool: [],           // the heroes drafted from
    first: "radiant",   // the side that picks first
    userSide: "radiant",
    picks: [],          // hero names in turn order
    state: null,        // the last ready state of the server (for the current picks)
    history: [],        // one entry per pick: {turn, side, hero, by, value, chosen, best}
    generation: 0,      // a new draft discards the answers to the old one's requests
    busy: false,        // waiting for the server
    drafterDelayMs: 350,
  };
  const $ = (id) => document.getElementById(id);
  const roles = {};
  const pct = (p) => (100 * p).toFixed(4) + "%";
  const mine = (p) => (draft.userSide === "radiant" ? p : 1 - p);  // Radiant's view -> the user's
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const sideName = (s) => s.charAt(0).toUpperCase() + s.slice(1);

  async function api(path, body) {
    const init = body === undefined ? {} : {method: "POST", headers: {"Content-Type": "application/json"},
                                            body: JSON.stringify(body)};
    const r = await fetch(path, init);
    let data;
    try { data = await r.json(); } catch (e) { throw new Error(`${path}: HTTP ${r.status}, not JSON`); }
    if (r.status >= 400) throw new Error(data.error || `${path}: HTTP ${r.status}`);
    data.httpStatus = r.status;
    return data;
  }

  function status(text, isError) {
    $("status").textContent = text || "";
    $("status").className = isError ? "error" : "";
  }

  // ---- the server's state ---------------------------------------------------------------------------------------------
  async function refresh() {
    const generation = draft.generation;
    draft.busy = true;
    renderOptions();
    for (;;) {
      let s;
      try {
        s = await api("/draft/api/state", {pool: draft.pool, first: draft.first, picks: draft.picks});
      } catch (e) {
        if (generation === draft.generation) { draft.busy = false; status(e.message, true); renderOptions(); }
        return;
      }
      if (generation !== draft.generation) return;
      if (s.status === "scoring") {
        status(`Scoring this pool's ${s.total.toLocaleString()} lineups from the first frames of a game ` +
               `(once; cached after): ${s.done.toLocaleString()} done (${Math.floor(100 * s.done / s.total)}%)`);
        await sleep(1000);
        if (generation !== draft.generation) return;
        continue;
      }
      draft.state = s;
      draft.busy = false;
      status("");
      render();
      if (!s.complete && s.on_turn !== draft.userSide) setTimeout(() => drafterPick(generation), draft.drafterDelayMs);
      return;
    }
  }

  function pick(hero, by) {
    const s = draft.state;
    draft.history.push({turn: s.turn, side: s.on_turn, hero, by, value: s.value, chosen: s.options[hero],
                        best: s.options[s.recommended], recommended: s.recommended});
    draft.picks.push(hero);
    draft.state = null;
    refresh();
  }

  function drafterPick(generation) {
    const s = draft.state;
    if (generation !== draft.generation || !s || s.complete || s.on_turn === draft.userSide) return;
    pick(s.recommended, "drafter");
  }

  function userPick(hero) {
    const s = draft.state;
    if (draft.busy || !s || s.complete || s.on_turn !== draft.userSide || !(hero in s.options)) return;
    pick(hero, "you");
  }

  // ---- drawing --------------------------------------------------------------------------------------------------------
  function render() {
    const s = draft.state;
    const setup = draft.setup;
    const sides = s.sides;
    for (const side of setup.sides) {
      const team = $(`team-${side}`);
      team.querySelector(".who").textContent = side === draft.userSide ? "(you)" : "(the drafter)";
      const heroes = s[side];
      const slots = sides.filter((x) => x === side).length;
      team.querySelector("ol").innerHTML = "";
      for (let k = 0; k < slots; k++) {
        const li = document.createElement("li");
        li.textContent = heroes[k] || "";
        if (!heroes[k]) li.className = "empty";
        team.querySelector("ol").appendChild(li);
      }
    }
    const order = $("order");
    order.innerHTML = "";
    sides.forEach((side, k) => {
      const li = document.createElement("li");
      li.textContent = String(k + 1);
      li.title = `pick ${k + 1}: ${side}`;
      li.className = `side-${side}` + (k < s.turn ? " done" : "") + (k === s.turn ? " current" : "");
      order.appendChild(li);
    });
    if (s.complete) {
      $("turn").innerHTML = "The draft is complete.";
      $("value").innerHTML = `The model's win probability for you (${draft.userSide}) in this lineup: ` +
                             `<b id="value-number">${pct(mine(s.value))}</b>`;
    } else {
      const yours = s.on_turn === draft.userSide;
      $("turn").innerHTML = `Pick ${s.turn + 1} of ${s.turns}: <b>${sideName(s.on_turn)}</b> picks ` +
                            (yours ? "(you: click a hero)" : "(the drafter, by minimax)");
      $("value").innerHTML = `Your win probability with best play by both sides from here: ` +
                             `<b id="value-number">${pct(mine(s.value))}</b>; recommended pick for ` +
                             `${sideName(s.on_turn)}: <b id="recommended">${s.recommended}</b>`;
    }
    const [lo, hi] = s.score_range;
    $("range").textContent = `Over this pool's ${s.lineups.toLocaleString()} lineups the model gives Radiant ` +
      `${pct(lo)} to ${pct(hi)}: ` + ((hi - lo) < 0.01 ? "differences this small are noise unless the " +
      "calibration below says otherwise." : "see the calibration below for what the numbers are worth.");
    renderOptions();
    renderLog();
  }

  function renderOptions() {
    const s = draft.state;
    const box = $("options");
    const yours = !!s && !s.complete && s.on_turn === draft.userSide && !draft.busy;
    box.className = yours ? "yours" : "";
    box.innerHTML = "";
    for (const hero of draft.pool) {
      const b = document.createElement("button");
      b.type = "button";
      b.dataset.hero = hero;
      let label = hero;
      let p = "";
      if (s && s.radiant.includes(hero)) { b.className = "picked-radiant"; p = "Radiant"; b.disabled = true; }
      else if (s && s.dire.includes(hero)) { b.className = "picked-dire"; p = "Dire"; b.disabled = true; }
      else if (s && hero in s.options) {
        p = `you win ${pct(mine(s.options[hero]))}`;
        if (hero === s.recommended) { b.classList.add("recommended"); label += " \u2605"; }
        b.disabled = !yours;
      } else { b.disabled = true; }
      b.innerHTML = `${label}<span class="role">${roles[hero] || ""}</span><span class="p">${p}</span>`;
      b.addEventListener("click", () => userPick(hero));
      box.appendChild(b);
    }
  }

  function renderLog() {
    const log = $("log");
    log.innerHTML = "";
    for (const h of draft.history) {
      const li = document.createElement("li");
      const lost = Math.abs(h.chosen - h.best) > 1e-12;
      li.innerHTML = `<span class="team-${h.side === "radiant" ? 0 : 1}">${sideName(h.side)}</span> ` +
        `(${h.by}): ${h.hero}; your win probability ${pct(mine(h.value))} \u2192 ${pct(mine(h.chosen))}` +
        (lost ? ` <span class="worse">(best was ${h.recommended}: ${pct(mine(h.best))})</span>` : " (best)");
      log.appendChild(li);
    }
  }

  function renderCalibration() {
    const setup = draft.setup;
    const cal = setup.calibration;
    const body = $("calibration-body");
    if (!cal) {
      body.innerHTML = `<p id="calibration-none">Not measured yet: this model's win probability has not been ` +
        `checked against recorded games, so the numbers above are the model's belief only. ` +
        `<code>${setup.calibration_command}</code> measures it.</p>`;
      return;
    }
    const rows = [["draft_score", "draft scores (first frames, self-play games)"],
                  ["first_frames", "first frames of each game, the model's team"],
                  ["per_decision", `every ${cal.record_every_s || 1} game s of each game`]];
    let html = `<p>Measured ${cal.measured || "?"} on ${cal.games} recorded games (${Object.entries(cal.opponents || {})
      .map(([k, v]) => `${v} vs ${k}`).join(", ")}; time limit ${cal.time_limit_s} s, a capped game decided by ` +
      `${cal.time_limit_outcome}; ${cal.draws_left_out || 0} drawn games left out). A Brier score at the base rate's ` +
      `is no skill; the expected calibration error (ECE) is the mean gap between predicted and observed win rates.</p>`;
    html += `<table id="calibration-table"><tr><th>predictions</th><th>n</th><th>Brier</th><th>Brier, always the ` +
            `base rate</th><th>ECE</th><th>predicted range</th></tr>`;
    for (const [key, what] of rows) {
      const c = cal[key];
      if (!c) continue;
      const f = (x) => (x === null || x === undefined ? "-" : x.toFixed(4));
      html += `<tr data-key="${key}"><td>${what}</td><td>${c.n}</td><td>${f(c.brier)}</td>` +
              `<td>${f(c.brier_base_rate)}</td><td>${f(c.ece)}</td><td>${c.prob_range ?
              pct(c.prob_range[0]) + " .. " + pct(c.prob_range[1]) : "-"}</td></tr>`;
    }
    html += "</table>";
    const ofDraft = !!(cal.draft_score && cal.draft_score.n);
    const bins = (ofDraft ? cal.draft_score : cal.per_decision || {}).bins || [];
    const used = bins.filter((b) => b.count);
    if (used.length) {
      html += `<p class="hint">Reliability of ${ofDraft ? "the draft scores" : "every recorded estimate"}: ` +
              `the predictions by bin, and how often the predicted team won.</p><table id="reliability"><tr><th>predicted</th><th>count</th><th>mean prediction</th><th>observed win rate</th></tr>` +
              used.map((b) => `<tr><td>${b.lo.toFixed(1)}..${b.hi.toFixed(1)}</td><td>${b.count}</td>` +
              `<td>${pct(b.mean_prob)}</td><td>${pct(b.win_rate)}</td></tr>`).join("") + "</table>";
    }
    body.innerHTML = html;
  }

  // ---- the pool and a new draft ---------------------------------------------------------------------------------------
  function renderPoolEditor() {
    const setup = draft.setup;
    $("pool-editor").hidden = setup.fixed_pool;
    $("pool-count").textContent = String(draft.pool.length);
    $("pool-hint").textContent = `${setup.min_pool} to ${setup.max_pool} heroes. A new pool's lineups are scored ` +
                                 `once (minutes for 12 heroes), then read from the cache.`;
    const box = $("pool-heroes");
    box.innerHTML = "";
    for (const h of setup.heroes) {
      const label = document.createElement("label");
      const input = document.createElement("input");
      input.type = "checkbox";
      input.value = h.name;
      input.checked = draft.pool.includes(h.name);
      input.addEventListener("change", () => {
        const chosen = [...box.querySelectorAll("input:checked")].map((x) => x.value);
        if (chosen.length < setup.min_pool || chosen.length > setup.max_pool) {
          status(`A pool has ${setup.min_pool} to ${setup.max_pool} heroes; ${chosen.length} are checked.`, true);
          return;
        }
        draft.pool = chosen;
        $("pool-count").textContent = String(chosen.length);
        newDraft();
      });
      label.appendChild(input);
      label.append(` ${h.name} `);
      const role = document.createElement("span");
      role.className = "role";
      role.textContent = h.role;
      label.appendChild(role);
      box.appendChild(label);
    }
  }

  function newDraft() {
    draft.generation += 1;
    draft.userSide = $("user-side").value;
    draft.first = $("first").value;
    draft.picks = [];
    draft.history = [];
    draft.state = null;
    $("turn").textContent = "";
    $("value").textContent = "";
    renderLog();
    refresh();
  }

  async function start() {
    try {
      draft.setup = await api("/draft/api/setup");
    } catch (e) {
      status(`The draft's setup failed: ${e.message}`, true);
      return;
    }
    const setup = draft.setup;
    for (const h of setup.heroes) roles[h.name] = h.role;
    draft.pool = setup.pool.slice();
    $("model").textContent = `model: ${setup.model}`;
    $("order-source").textContent = `turn order: ${setup.order_source}`;
    renderPoolEditor();
    renderCalibration();
    $("new-draft").addEventListener("click", newDraft);
    $("user-side").addEventListener("change", newDraft);
    $("first").addEventListener("change", newDraft);
    document.body.dataset.ready = "1";
    newDraft();
  }

  start();
})();
