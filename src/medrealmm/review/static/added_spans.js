// Residual-PII pass: select text in a turn, pick a type, "添加": the span travels with the
// decision as add_span = "event:start:end:TYPE" (offsets into the turn's text as shown).
document.addEventListener("DOMContentLoaded", () => {
  const add = document.getElementById("span-add");
  if (!add) return;
  const shown = document.getElementById("span-selected");
  const list = document.getElementById("span-list");
  const type = document.getElementById("span-type");
  let picked = null;

  const offset = (content, node, within) => {
    const range = document.createRange();
    range.setStart(content, 0);
    range.setEnd(node, within);
    return range.toString().length;
  };

  document.addEventListener("selectionchange", () => {
    const selection = document.getSelection();
    if (!selection || selection.isCollapsed || selection.rangeCount === 0) return;
    const range = selection.getRangeAt(0);
    const start = range.startContainer.parentElement?.closest("p.content[data-event]");
    const end = range.endContainer.parentElement?.closest("p.content[data-event]");
    if (!start || start !== end) return;
    const from = offset(start, range.startContainer, range.startOffset);
    const to = offset(start, range.endContainer, range.endOffset);
    if (to <= from) return;
    picked = { event: start.dataset.event, start: from, end: to, text: range.toString() };
    shown.textContent = `#${picked.event}「${picked.text}」`;
    add.disabled = false;
  });

  add.addEventListener("click", () => {
    if (!picked) return;
    const item = document.createElement("li");
    const value = `${picked.event}:${picked.start}:${picked.end}:${type.value}`;
    const input = Object.assign(document.createElement("input"), {
      type: "hidden", name: "add_span", value,
    });
    const remove = Object.assign(document.createElement("button"), {
      type: "button", textContent: "删除",
    });
    remove.addEventListener("click", () => item.remove());
    item.append(`#${picked.event}「${picked.text}」→ ${type.options[type.selectedIndex].text} `,
      input, remove);
    item.dataset.span = value;
    list.append(item);
    picked = null;
    add.disabled = true;
    shown.textContent = "（未选中）";
  });

  // Box mode: a drag on an image draws a region to mask, kept as
  // add_box = "event:image:x:y:width:height" in fractions of the image.
  const boxMode = document.getElementById("box-mode");
  const boxes = document.getElementById("box-list");
  let drag = null;
  const fraction = (shot, event) => {
    const r = shot.getBoundingClientRect();
    return {
      x: Math.min(1, Math.max(0, (event.clientX - r.left) / r.width)),
      y: Math.min(1, Math.max(0, (event.clientY - r.top) / r.height)),
    };
  };
  const place = (element, x, y, w, h) => Object.assign(element.style, {
    left: `${x * 100}%`, top: `${y * 100}%`, width: `${w * 100}%`, height: `${h * 100}%`,
  });
  document.querySelectorAll(".shot[data-image]").forEach((shot) => {
    shot.addEventListener("click", (event) => { if (boxMode.checked) event.preventDefault(); });
    shot.addEventListener("mousedown", (event) => {
      if (!boxMode.checked) return;
      event.preventDefault();
      const outline = Object.assign(document.createElement("span"), { className: "added-box" });
      shot.append(outline);
      drag = { shot, outline, start: fraction(shot, event) };
    });
  });
  document.addEventListener("mousemove", (event) => {
    if (!drag) return;
    const at = fraction(drag.shot, event);
    const x = Math.min(at.x, drag.start.x), y = Math.min(at.y, drag.start.y);
    drag.box = { x, y, w: Math.abs(at.x - drag.start.x), h: Math.abs(at.y - drag.start.y) };
    place(drag.outline, x, y, drag.box.w, drag.box.h);
  });
  document.addEventListener("mouseup", () => {
    if (!drag) return;
    const { shot, outline, box } = drag;
    drag = null;
    if (!box || box.w < 0.01 || box.h < 0.01) { outline.remove(); return; }
    const round = (v) => v.toFixed(4);
    const value = [shot.dataset.event, shot.dataset.image, round(box.x), round(box.y),
      round(box.w), round(box.h)].join(":");
    const item = document.createElement("li");
    const input = Object.assign(document.createElement("input"), {
      type: "hidden", name: "add_box", value,
    });
    const remove = Object.assign(document.createElement("button"), {
      type: "button", textContent: "删除",
    });
    remove.addEventListener("click", () => { item.remove(); outline.remove(); });
    item.append(`图 #${shot.dataset.event}-${shot.dataset.image} 遮挡框 `, input, remove);
    boxes.append(item);
  });
});
