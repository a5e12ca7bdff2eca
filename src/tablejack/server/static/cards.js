// Card faces and chips drawn as SVG by the page itself (no image files): a card scales to any
// size (its width comes from the CSS variable --card of its container), keeps its code in
// data-card ("10S", "AH", "back") and says it in words to a screen reader.
const NS = "http://www.w3.org/2000/svg";
const W = 250, H = 350;

// Suit shapes in a 100 × 100 box.
const SUIT_PATHS = {
  S: "M50 2C78 26 100 44 100 64c0 15-11 26-25 26-9 0-17-4-21-11 1 9 5 15 13 21H33c8-6 12-12 13-21-4 7-12 11-21 11C11 90 0 79 0 64 0 44 22 26 50 2z",
  H: "M50 96C22 74 0 54 0 30 0 14 12 3 27 3c11 0 19 6 23 15 4-9 12-15 23-15 15 0 27 11 27 27 0 24-22 44-50 66z",
  D: "M50 0 88 50 50 100 12 50z",
  C: "M50 4a22 22 0 0 1 19 33 22 22 0 1 1-13 38c1 9 6 17 13 23H31c7-6 12-14 13-23a22 22 0 1 1-13-38A22 22 0 0 1 50 4z",
};
const SUIT_NAMES = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
const RANK_NAMES = { A: "ace", J: "jack", Q: "queen", K: "king" };
// Pip centres of the number cards (the lower half drawn upside down, as printed cards are).
const PIPS = {
  2: [[125, 80], [125, 270]],
  3: [[125, 80], [125, 175], [125, 270]],
  4: [[78, 80], [172, 80], [78, 270], [172, 270]],
  5: [[78, 80], [172, 80], [125, 175], [78, 270], [172, 270]],
  6: [[78, 80], [172, 80], [78, 175], [172, 175], [78, 270], [172, 270]],
  7: [[78, 80], [172, 80], [125, 127], [78, 175], [172, 175], [78, 270], [172, 270]],
  8: [[78, 80], [172, 80], [125, 127], [78, 175], [172, 175], [125, 223], [78, 270], [172, 270]],
  9: [[78, 80], [172, 80], [78, 143], [172, 143], [125, 175], [78, 207], [172, 207], [78, 270], [172, 270]],
  10: [[78, 80], [172, 80], [125, 112], [78, 143], [172, 143], [78, 207], [172, 207], [125, 238], [78, 270], [172, 270]],
};

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  for (const child of children) node.append(child);
  return node;
}

function suit(code, x, y, size, flip = false) {
  const scale = size / 100;
  const transform = flip
    ? `translate(${x + size / 2} ${y + size / 2}) rotate(180) scale(${scale})`
    : `translate(${x - size / 2} ${y - size / 2}) scale(${scale})`;
  return svg("path", { d: SUIT_PATHS[code], transform, class: "pip" });
}

function corner(rank, suitCode) {
  const label = svg("text", { x: 34, y: 74, "text-anchor": "middle", class: "rank" });
  label.textContent = rank;
  return svg("g", {}, label, suit(suitCode, 34, 108, 38));
}

// The words of a card for a screen reader and a tooltip ("10 of spades", "ace of hearts").
export function cardName(code) {
  if (!code || code === "back") return "face down";
  const rank = code.slice(0, -1), suitCode = code.slice(-1);
  return `${RANK_NAMES[rank] || rank} of ${SUIT_NAMES[suitCode] || suitCode}`;
}

// One card: an SVG face (or back) in a <span class="card"> carrying data-card.
export function card(code) {
  const back = !code || code === "back";
  const holder = document.createElement("span");
  holder.className = back ? "card back" : "card";
  holder.dataset.card = back ? "back" : code;
  holder.setAttribute("role", "img");
  holder.setAttribute("aria-label", cardName(code));
  holder.title = back ? "" : code;
  const face = svg("svg", { viewBox: `0 0 ${W} ${H}`, "aria-hidden": "true", focusable: "false" });
  if (back) {
    face.append(
      svg("rect", { x: 2, y: 2, width: W - 4, height: H - 4, rx: 18, class: "back-edge" }),
      svg("rect", { x: 16, y: 16, width: W - 32, height: H - 32, rx: 10, class: "back-field" }),
      svg("path", { class: "back-lattice", d: lattice() }),
    );
    holder.append(face);
    return holder;
  }
  const rank = code.slice(0, -1), suitCode = code.slice(-1);
  const red = suitCode === "H" || suitCode === "D";
  holder.classList.add(red ? "red" : "black");
  face.append(svg("rect", { x: 2, y: 2, width: W - 4, height: H - 4, rx: 18, class: "face" }));
  face.append(corner(rank, suitCode));
  face.append(svg("g", { transform: `rotate(180 ${W / 2} ${H / 2})` }, corner(rank, suitCode)));
  if (PIPS[rank]) {
    for (const [x, y] of PIPS[rank]) face.append(suit(suitCode, x, y, 46, y > 175));
  } else if (rank === "A") {
    face.append(suit(suitCode, 125, 175, 110));
  } else {  // J, Q, K: a framed court with the letter and the suit
    face.append(svg("rect", { x: 62, y: 52, width: 126, height: 246, rx: 10, class: "court" }));
    const letter = svg("text", { x: 125, y: 178, "text-anchor": "middle", class: "court-letter" });
    letter.textContent = rank;
    face.append(letter, suit(suitCode, 125, 240, 54));
  }
  holder.append(face);
  return holder;
}

// The back's lattice: diagonal lines both ways, cut to the inner field.
function lattice() {
  const [x0, y0, x1, y1] = [16, 16, W - 16, H - 16];
  let d = "";
  for (let c = x0 - y1; c <= x1 - y0; c += 26) {  // x - y = c
    const a = [Math.max(x0, y0 + c), Math.max(x0, y0 + c) - c], b = [Math.min(x1, y1 + c), Math.min(x1, y1 + c) - c];
    d += `M${a[0]} ${a[1]}L${b[0]} ${b[1]}`;
  }
  for (let c = x0 + y0; c <= x1 + y1; c += 26) {  // x + y = c
    const a = [Math.max(x0, c - y1), c - Math.max(x0, c - y1)], b = [Math.min(x1, c - y0), c - Math.min(x1, c - y0)];
    d += `M${a[0]} ${a[1]}L${b[0]} ${b[1]}`;
  }
  return d;
}

// A hand: its cards side by side, overlapping; `fresh(i, code)` says which cards just arrived
// (they get the class "deal" and slide in, unless motion is off).
export function hand(codes, { fresh = () => false, className = "" } = {}) {
  const row = document.createElement("div");
  row.className = `cards ${className}`.trim();
  const count = (codes || []).length;
  row.dataset.count = count;
  if (count > 5) row.dataset.many = "";
  (codes || []).forEach((code, i) => {
    const face = card(code);
    if (fresh(i, code)) face.classList.add("deal");
    row.append(face);
  });
  return row;
}

// Chips: the colour of the largest denomination the amount reaches, the amount written on it.
const DENOMINATIONS = [[100000, "orange"], [50000, "purple"], [10000, "black"], [2500, "green"], [500, "red"], [0, "white"]];
export function chipText(cents) {
  const dollars = cents / 100;
  if (dollars >= 1000) return `$${(dollars / 1000).toFixed(dollars % 1000 ? 1 : 0)}K`;
  return Number.isInteger(dollars) ? `$${dollars}` : `$${dollars.toFixed(2)}`;
}
export function chip(cents, caption = "", attrs = {}) {
  const colour = DENOMINATIONS.find(([least]) => cents >= least)[1];
  const box = document.createElement("span");
  box.className = `chip chip-${colour}`;
  for (const [key, value] of Object.entries(attrs)) box.setAttribute(key, value);
  const face = svg("svg", { viewBox: "0 0 100 100", "aria-hidden": "true", focusable: "false" },
    svg("circle", { cx: 50, cy: 50, r: 47, class: "chip-body" }),
    svg("circle", { cx: 50, cy: 50, r: 41, class: "chip-edge" }),
    svg("circle", { cx: 50, cy: 50, r: 31, class: "chip-inlay" }));
  const words = chipText(cents);
  const size = [30, 30, 30, 28, 23, 19, 16][Math.min(words.length, 6)];
  const text = svg("text", { x: 50, y: 50 + size * 0.36, "text-anchor": "middle", class: "chip-text", "font-size": size });
  text.textContent = words;
  face.append(text);
  box.append(face);
  if (caption) {
    const label = document.createElement("span");
    label.className = "chip-caption";
    label.textContent = caption;
    box.append(label);
  }
  return box;
}
