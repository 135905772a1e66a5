// The map renderer shared by the replay viewer (app/viewer/viewer.js, inlined into its page by app/replay.py) and
// the play page (web/static/play.js): the terrain, the lanes and the bases, every unit's shape, the fog of war, the
// hero labels, the hero panel's rows and the event log's sentences, for a replay header (moba/env/replay_file.py).
//
// window.openfiveMap(header) returns the renderer of that game. Positions go through a view, M.view(size, dpr, x0,
// y0, span): a square of `size` CSS pixels showing the map square of side `span` map units whose bottom-left corner
// is (x0, y0) (the whole map: M.view(size, dpr)); view.sx(x), view.sy(y) are CSS pixels, view.toCanvas(x, y) canvas
// pixels, view.toMap(px, py) the map point under CSS pixel (px, py).
(function () {
  "use strict";

  function index(names) {
    const out = {};
    names.forEach((n, i) => { out[n] = i; });
    return out;
  }

  function fmt(t) {
    const s = Math.max(0, Math.floor(t + 1e-6));
    return String(Math.floor(s / 60)).padStart(2, "0") + ":" + String(s % 60).padStart(2, "0");
  }

  window.openfiveMap = function (H) {
    const F = index(H.unit_fields);
    const HF = index(H.hero_fields);
    const TYPE = index(H.unit_types);
    const SIDES = H.teams; // ["radiant", "dire"]
    const MAP = H.map_size;
    const COLORS = {
      hero: ["#38c172", "#e3342f"],
      creep: ["#9be3b4", "#f5a3a0"],
      building: ["#1d7a46", "#a11f1b"],
      ward: ["#f3c969", "#f3c969"],
      rubble: "#4a4f57",
      selected: "#f3c969",
    };
    const HERO_R = 8; // a hero's disc's radius in CSS pixels
    const BUILDING_EVENTS = ["tower", "barracks", "shrine", "ancient"];
    const GROUPS = [ // event log filters: [class, label, event types, shown at first]
      ["kills", "kills & deaths", ["kill", "death"], true],
      ["buildings", "buildings", BUILDING_EVENTS, true],
      ["buybacks", "buybacks", ["buyback"], true],
      ["purchases", "purchases", ["purchase"], false],
      ["casts", "casts", ["cast"], false],
      ["farm", "last hits & denies", ["last_hit", "deny"], false],
    ];
    const IS_BUILDING = new Set(["tower", "barracks_melee", "barracks_ranged", "ancient", "shrine", "fountain"]
      .map((n) => TYPE[n]));
    // drawing order: buildings under wards under creeps under heroes
    const LAYER = (type) => type === TYPE.hero ? 3 : IS_BUILDING.has(type) ? 0 : type === TYPE.ward ? 1 : 2;

    // ---- views -------------------------------------------------------------------------------------------------
    function view(size, dpr, x0, y0, span) {
      x0 = x0 || 0;
      y0 = y0 || 0;
      span = span || MAP;
      const sx = (x) => (x - x0) / span * size; // CSS pixels
      const sy = (y) => size - (y - y0) / span * size;
      return {
        size: size, dpr: dpr, x0: x0, y0: y0, span: span, sx: sx, sy: sy,
        toCanvas: (x, y) => [Math.round(sx(x) * dpr), Math.round(sy(y) * dpr)],
        toMap: (px, py) => [x0 + px / size * span, y0 + (size - py) / size * span],
        units: (d) => d / span * size, // a length in map units, in CSS pixels
      };
    }

    function offscreen(like, dpr) { // a canvas of the size of `like`, its context drawing in CSS pixels
      const off = document.createElement("canvas");
      off.width = like.width;
      off.height = like.height;
      const g = off.getContext("2d");
      g.scale(dpr, dpr);
      return [off, g];
    }

    // ---- the map -----------------------------------------------------------------------------------------------
    function paintBackground(g, v) { // the terrain, the river, the bases and the lanes of view v, on context g
      const rows = H.map.terrain, river = H.map.river, n = rows.length, cell = v.size / n * (MAP / v.span);
      const c0 = Math.max(0, Math.floor(v.x0 / MAP * n)), c1 = Math.min(n, Math.ceil((v.x0 + v.span) / MAP * n));
      const r0 = Math.max(0, Math.floor((MAP - v.y0 - v.span) / MAP * n));
      const r1 = Math.min(n, Math.ceil((MAP - v.y0) / MAP * n));
      const left = v.sx(0), top = v.sy(MAP);
      for (let r = r0; r < r1; r++) {
        for (let c = c0; c < c1; c++) {
          g.fillStyle = rows[r][c] === "0" ? "#1e2a1a" : river[r][c] === "1" ? "#2d5a74" : "#3e4d33";
          g.fillRect(left + c * cell, top + r * cell, cell + 0.5, cell + 0.5);
        }
      }
      // the bases: a team-tinted disc around each fountain and ancient
      for (const b of H.map.buildings) {
        if (b.type === "ancient") {
          g.fillStyle = b.team === 0 ? "rgba(56,193,114,0.16)" : "rgba(227,52,47,0.16)";
          g.beginPath();
          g.arc(v.sx(b.x), v.sy(b.y), v.units(1500), 0, 2 * Math.PI);
          g.fill();
        }
      }
      g.strokeStyle = "rgba(196,170,120,0.55)";
      g.lineWidth = Math.max(3, v.units(220));
      g.lineJoin = "round";
      for (const path of Object.values(H.map.lanes)) {
        g.beginPath();
        path.forEach(([x, y], k) => (k ? g.lineTo(v.sx(x), v.sy(y)) : g.moveTo(v.sx(x), v.sy(y))));
        g.stroke();
      }
    }

    function background(v, like) { // view v's background drawn once, on a canvas of the size of `like`
      const [off, g] = offscreen(like, v.dpr);
      paintBackground(g, v);
      return off;
    }

    function visibleTo(u, team) { // is unit row u visible to team (0, 1)?
      return u[F.team] === team || (u[F.seen_by] & (1 << team)) !== 0;
    }

    const fogLayers = new WeakMap(); // per canvas: [canvas, context], the fog of war's darkness, drawn every frame

    // darkens canvas (its context ctx) but around the living units of `team` in `units`, by their vision, in view v
    function drawFog(ctx, canvas, v, units, team) {
      const g = ctx;
      g.save();
      let layer = fogLayers.get(canvas);
      if (!layer || layer[0].width !== canvas.width || layer[0].height !== canvas.height) {
        layer = offscreen(canvas, v.dpr);
        fogLayers.set(canvas, layer);
      }
      const [fog, f] = layer;
      f.globalCompositeOperation = "copy";
      f.fillStyle = "rgba(5,7,10,0.7)";
      f.fillRect(0, 0, v.size, v.size);
      f.globalCompositeOperation = "destination-out";
      f.fillStyle = "#000";
      for (const u of units) {
        if (u[F.team] === team && u[F.alive] && u[F.vision] > 0) {
          f.beginPath();
          f.arc(v.sx(u[F.x]), v.sy(u[F.y]), v.units(u[F.vision]), 0, 2 * Math.PI);
          f.fill();
        }
      }
      g.setTransform(1, 0, 0, 1, 0, 0);
      g.drawImage(fog, 0, 0);
      g.restore();
    }

    function bar(g, x, y, w, frac, color) {
      g.fillStyle = "rgba(0,0,0,0.7)";
      g.fillRect(x - w / 2 - 1, y - 1, w + 2, 5);
      g.fillStyle = color;
      g.fillRect(x - w / 2, y, w * Math.max(0, Math.min(1, frac)), 3);
    }

    function buildingSide(type) { // a building's side in CSS pixels
      return type === TYPE.ancient ? 18 : type === TYPE.fountain ? 16 : type === TYPE.tower ? 11
        : type === TYPE.shrine ? 9 : 10;
    }

    // draws unit row u at (px, py) CSS pixels on context g; ghost: a building out of the fog team's sight (its
    // outline); selected: the slot of the hero drawn with the selection's ring
    function drawUnit(g, u, px, py, ghost, selected) {
      const type = u[F.type], team = u[F.team];
      const alive = u[F.alive] === 1;
      const hpFrac = u[F.max_hp] > 0 ? u[F.hp] / u[F.max_hp] : 0;
      if (IS_BUILDING.has(type)) {
        const s = buildingSide(type);
        if (!alive) {
          g.strokeStyle = COLORS.rubble;
          g.lineWidth = 2;
          g.beginPath();
          g.moveTo(px - s / 2, py - s / 2); g.lineTo(px + s / 2, py + s / 2);
          g.moveTo(px + s / 2, py - s / 2); g.lineTo(px - s / 2, py + s / 2);
          g.stroke();
          return;
        }
        if (ghost) {
          g.strokeStyle = COLORS.building[team];
          g.lineWidth = 1.5;
          g.strokeRect(px - s / 2, py - s / 2, s, s);
          return;
        }
        g.fillStyle = COLORS.building[team];
        if (type === TYPE.fountain || type === TYPE.ancient) {
          g.beginPath();
          g.moveTo(px, py - s / 2); g.lineTo(px + s / 2, py); g.lineTo(px, py + s / 2); g.lineTo(px - s / 2, py);
          g.closePath();
          g.fill();
        } else {
          g.fillRect(px - s / 2, py - s / 2, s, s);
        }
        g.strokeStyle = "rgba(0,0,0,0.8)";
        g.lineWidth = 1;
        g.strokeRect(px - s / 2, py - s / 2, s, s);
        if (type !== TYPE.fountain && u[F.max_hp] > 0) {
          bar(g, px, py - s / 2 - 6, Math.max(16, s + 6), hpFrac, hpFrac > 0.5 ? "#7ed957" : "#f0b03c");
        }
        return;
      }
      if (type === TYPE.hero) {
        const isSelected = u[F.hero] === selected;
        g.fillStyle = COLORS.hero[team];
        g.beginPath();
        g.arc(px, py, HERO_R, 0, 2 * Math.PI);
        g.fill();
        g.strokeStyle = isSelected ? COLORS.selected : "#ffffff";
        g.lineWidth = isSelected ? 3 : 1.5;
        g.stroke();
        if (u[F.max_hp] > 0) bar(g, px, py - HERO_R - 8, 28, hpFrac, team === 0 ? "#4be08a" : "#ff5b55");
        if (u[F.max_mana] > 0) {
          g.fillStyle = "#3d8ef0";
          g.fillRect(px - 14, py - HERO_R - 4, 28 * Math.max(0, Math.min(1, u[F.mana] / u[F.max_mana])), 2);
        }
        return;
      }
      if (type === TYPE.ward) {
        g.fillStyle = COLORS.ward[team];
        g.strokeStyle = COLORS.hero[team];
        g.lineWidth = 1.5;
        g.beginPath();
        g.arc(px, py, 3.5, 0, 2 * Math.PI);
        g.fill();
        g.stroke();
        return;
      }
      g.fillStyle = COLORS.creep[team]; // creeps: melee a circle, ranged a triangle
      g.beginPath();
      if (type === TYPE.creep_ranged) {
        g.moveTo(px, py - 4); g.lineTo(px + 4, py + 3); g.lineTo(px - 4, py + 3); g.closePath();
      } else {
        g.arc(px, py, 3.2, 0, 2 * Math.PI);
      }
      g.fill();
    }

    // ---- hero labels: name and level, inside the map, clear of each other and of the heroes --------------------
    // A hero's label goes to the first of these places (offsets of its centre from the hero's, in CSS pixels;
    // "side" ones beside the hero by half the label's width) where it covers no other label and no hero, and if
    // there is none, where it covers the least; every place is moved inside the map.
    const LABEL_H = 13, LABEL_FONT = "11px system-ui, sans-serif";
    const LABEL_PLACES = [[0, -25], [0, 17], [1, 0], [-1, 0]];
    for (let k = 1; k <= 4; k++) LABEL_PLACES.push([0, -25 - k * LABEL_H], [0, 17 + k * LABEL_H]);

    function heroBox(px, py) { // a hero's disc and its bars: [left, top, right, bottom]
      return [px - 15, py - HERO_R - 10, px + 15, py + HERO_R + 1];
    }

    function overlap(a, b) {
      return Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0]))
        * Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
    }

    function heroLevel(rec, slot) { // the hero's level at this record (its row in the record's heroes, as the panel)
      const row = rec.heroes.find((h) => h[HF.slot] === slot);
      return row ? row[HF.level] : null;
    }

    // heroes: [{slot, px, py}] in CSS pixels; obstacles: boxes a label should rather not cover (the buildings);
    // size: the map's side in CSS pixels; selected: the selected hero's slot (its label is placed first)
    function placeLabels(g, rec, heroes, obstacles, size, selected) {
      g.font = LABEL_FONT;
      const bodies = heroes.map((h) => heroBox(h.px, h.py));
      const placed = [];
      const selectedFirst = heroes.filter((h) => h.slot === selected)
        .concat(heroes.filter((h) => h.slot !== selected));
      for (const h of selectedFirst) {
        const level = heroLevel(rec, h.slot);
        const text = H.heroes[h.slot].hero + " lv" + (level === null ? "?" : level);
        const w = Math.ceil(g.measureText(text).width) + 4;
        let best = null, bestCost = Infinity;
        for (const [side, dy] of LABEL_PLACES) {
          const cx = Math.max(1 + w / 2, Math.min(size - 1 - w / 2, h.px + side * (16 + w / 2)));
          const cy = Math.max(1 + LABEL_H / 2, Math.min(size - 1 - LABEL_H / 2, h.py + dy));
          const box = [cx - w / 2, cy - LABEL_H / 2, cx + w / 2, cy + LABEL_H / 2];
          let cost = 0;
          for (const b of placed) cost += 4 * overlap(box, b.box);
          for (const b of bodies) cost += 2 * overlap(box, b);
          for (const b of obstacles) cost += 0.25 * overlap(box, b);
          if (cost < bestCost - 1e-9) { best = box; bestCost = cost; }
          if (cost === 0) break;
        }
        placed.push({ slot: h.slot, text: text, level: level, box: best, px: h.px, py: h.py });
      }
      return placed;
    }

    function drawLabels(g, placed, selected) {
      g.font = LABEL_FONT;
      g.textAlign = "center";
      g.textBaseline = "middle";
      for (const l of placed) {
        const [x0, y0, x1, y1] = l.box, cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
        const nx = Math.max(x0, Math.min(x1, l.px)), ny = Math.max(y0, Math.min(y1, l.py));
        const d = Math.hypot(nx - l.px, ny - l.py);
        if (d > 2 * HERO_R + 6) { // far from its hero: a line from the hero's disc to it
          g.strokeStyle = "rgba(255,255,255,0.55)";
          g.lineWidth = 1;
          g.beginPath();
          g.moveTo(l.px + (nx - l.px) / d * HERO_R, l.py + (ny - l.py) / d * HERO_R);
          g.lineTo(nx, ny);
          g.stroke();
        }
        g.fillStyle = "rgba(10,12,16,0.62)";
        g.fillRect(x0, y0, x1 - x0, y1 - y0);
        g.fillStyle = l.slot === selected ? COLORS.selected : "#ffffff";
        g.fillText(l.text, cx, cy + 0.5);
      }
      g.textBaseline = "alphabetic";
    }

    // ---- the hero panel: a row per hero ------------------------------------------------------------------------
    // builds the rows in tbody (columns: hero, lvl, gold, K/D/A, LH/DN, items, status); onClick(slot) on a click;
    // returns {rows: [{tr, cells}], update(rec)}: update fills them from a record (a gold of null shows "?")
    function heroPanel(tbody, onClick) {
      const rows = [];
      H.heroes.forEach((h) => {
        const tr = document.createElement("tr");
        tr.dataset.slot = h.slot;
        const cells = {};
        for (const k of ["hero", "level", "gold", "kda", "farm", "items", "status"]) {
          const td = document.createElement("td");
          td.className = k;
          tr.appendChild(td);
          cells[k] = td;
        }
        cells.hero.textContent = h.hero;
        cells.hero.className = "hero team-" + SIDES.indexOf(h.team);
        cells.hero.title = h.agent_id + " (" + H.agents[h.team] + ")";
        tr.addEventListener("click", () => onClick(h.slot));
        tbody.appendChild(tr);
        rows.push({ tr: tr, cells: cells });
      });

      function update(rec) {
        for (const row of rec.heroes) {
          const slot = row[HF.slot], p = rows[slot], c = p.cells;
          c.level.textContent = row[HF.level];
          c.gold.textContent = row[HF.gold] === null ? "?" : row[HF.gold];
          c.kda.textContent = row[HF.kills] + "/" + row[HF.deaths] + "/" + row[HF.assists];
          c.farm.textContent = row[HF.last_hits] + "/" + row[HF.denies];
          c.items.textContent = row[HF.items].map((k) => H.items[k].replace(/_/g, " ")).join(", ");
          const dead = row[HF.respawn_s] > 0;
          p.tr.classList.toggle("dead", dead);
          const d = rec.model && rec.model[H.heroes[slot].agent_id];
          let status = dead ? "dead, back in " + Math.ceil(row[HF.respawn_s]) + " s" : "";
          if (d) {
            status += (status ? "; " : "") + (d.win_prob === null ? "" : "win " + Math.round(100 * d.win_prob)
              + "% ") + d.action;
          }
          c.status.textContent = status;
        }
      }
      return { rows: rows, update: update };
    }

    // ---- the event log's sentences -----------------------------------------------------------------------------
    function heroName(slot) { return slot === null || slot === undefined || slot < 0 ? null : H.heroes[slot].hero; }

    function describe(e) { // [the sentence, the side it counts for (or null)]
      const who = heroName(e.hero);
      const lane = e.lane ? " " + e.lane : "";
      switch (e.type) {
        case "kill": return [who + " killed " + heroName(e.victim), H.heroes[e.hero].team];
        case "death": return [heroName(e.victim) + " died to a " + (e.killer_type || "?").replace("_", " "),
          SIDES[1 - SIDES.indexOf(H.heroes[e.victim].team)]];
        case "last_hit": return [who + " last hit a " + e.unit_type.replace("_", " "), H.heroes[e.hero].team];
        case "deny": return [who + " denied a " + e.unit_type.replace("_", " "), H.heroes[e.hero].team];
        case "tower": case "barracks": case "shrine": case "ancient": {
          const what = e.type === "tower" ? "T" + e.tier + lane + " tower"
            : (e.type === "barracks" ? lane.trim() + " " : "") + e.type;
          return [SIDES[e.team] + " " + what + " destroyed" + (who ? " (last hit " + who + ")" : ""),
            SIDES[1 - e.team]];
        }
        case "buyback": return [who + " bought back", H.heroes[e.hero].team];
        case "purchase": return [who + " bought " + e.item.replace(/_/g, " "), H.heroes[e.hero].team];
        case "cast": return [who + " cast " + e.ability.replace(/_/g, " "), H.heroes[e.hero].team];
        default: return [e.type, null];
      }
    }

    function eventGroups() { // event type -> its log filter's class
      const group = {};
      GROUPS.forEach(([cls, , types]) => types.forEach((t) => { group[t] = cls; }));
      return group;
    }

    return {
      header: H, F: F, HF: HF, TYPE: TYPE, SIDES: SIDES, MAP: MAP, COLORS: COLORS, HERO_R: HERO_R,
      BUILDING_EVENTS: BUILDING_EVENTS, GROUPS: GROUPS, IS_BUILDING: IS_BUILDING, LAYER: LAYER, fmt: fmt,
      view: view, offscreen: offscreen, paintBackground: paintBackground, background: background,
      visibleTo: visibleTo, drawFog: drawFog, bar: bar, buildingSide: buildingSide, drawUnit: drawUnit,
      heroBox: heroBox, placeLabels: placeLabels, drawLabels: drawLabels, heroLevel: heroLevel,
      heroPanel: heroPanel, describe: describe, eventGroups: eventGroups,
    };
  };
  window.openfiveMap.fmt = fmt;
})();
