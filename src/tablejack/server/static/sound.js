// Sound cues and card animations of the terminal, off with one switch that the terminal
// remembers (localStorage). Sounds are short tones made with WebAudio (no sound files); they
// play only after the player has touched the page (browsers allow no sound before). When the
// browser asks for reduced motion the cards never move (style.css) and the switch starts off.
const STORED = "tablejack.effects";
const reduced = typeof matchMedia === "function" ? matchMedia("(prefers-reduced-motion: reduce)") : { matches: false };

export function reducedMotion() { return reduced.matches; }

export function effectsOn() {
  let stored = null;
  try { stored = localStorage.getItem(STORED); } catch { stored = null; }
  if (stored === "on" || stored === "off") return stored === "on";
  return !reduced.matches;
}

export function setEffects(on) {
  try { localStorage.setItem(STORED, on ? "on" : "off"); } catch { /* private mode */ }
  applyEffects();
}

// The page's class says whether cards may move (style.css animates only under .effects-on).
export function applyEffects() {
  const on = effectsOn() && !reduced.matches;
  document.body.classList.toggle("effects-on", on);
  return effectsOn();
}

let context = null;
let touched = false;
for (const event of ["pointerdown", "keydown"]) {
  window.addEventListener(event, () => { touched = true; }, { capture: true, once: false, passive: true });
}

function audio() {
  if (!touched) return null;
  if (!context) {
    const Context = window.AudioContext || window.webkitAudioContext;
    if (!Context) return null;
    try { context = new Context(); } catch { return null; }
  }
  if (context.state === "suspended") context.resume().catch(() => {});
  return context;
}

// Each cue: tones of [frequency Hz, seconds, wave], one after another.
const CUES = {
  card: [[620, 0.05, "triangle"]],
  turn: [[880, 0.1, "sine"], [1175, 0.14, "sine"]],
  win: [[523, 0.09, "triangle"], [659, 0.09, "triangle"], [784, 0.2, "triangle"]],
  lose: [[294, 0.14, "sine"], [220, 0.24, "sine"]],
  push: [[440, 0.16, "sine"]],
  tick: [[1000, 0.03, "square"]],
  alarm: [[880, 0.18, "square"], [660, 0.18, "square"], [880, 0.18, "square"]],
};

export function cue(name) {
  if (!effectsOn()) return;
  const tones = CUES[name];
  const ctx = tones ? audio() : null;
  if (!ctx) return;
  let at = ctx.currentTime + 0.01;
  for (const [frequency, seconds, wave] of tones) {
    const oscillator = ctx.createOscillator();
    const gain = ctx.createGain();
    oscillator.type = wave;
    oscillator.frequency.value = frequency;
    gain.gain.setValueAtTime(0.0001, at);
    gain.gain.exponentialRampToValueAtTime(0.12, at + 0.01);
    gain.gain.exponentialRampToValueAtTime(0.0001, at + seconds);
    oscillator.connect(gain).connect(ctx.destination);
    oscillator.start(at);
    oscillator.stop(at + seconds + 0.02);
    at += seconds;
  }
}
