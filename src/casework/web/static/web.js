// casework web UI: the only script. Buttons submit once; the run page follows its SSE stream.
// Everything shown is set with textContent, never as HTML.
"use strict";

document.querySelectorAll("form.decide-form").forEach((form) => {
  form.addEventListener("submit", () => {
    // Let the clicked button's name/value go with the form, then stop a second click.
    setTimeout(() => form.querySelectorAll("button").forEach((b) => { b.disabled = true; }), 0);
  });
});

const list = document.getElementById("events");
if (list) {
  const status = document.getElementById("run-status");
  const made = document.getElementById("items-made");
  const seen = new Set(Array.from(list.children).map((li) => li.dataset.seq));
  const show = (type, data, seq) => {
    if (seq && seen.has(seq)) return;
    if (seq) seen.add(seq);
    const li = document.createElement("li");
    li.className = "event " + type;
    if (seq) li.dataset.seq = seq;
    const head = document.createElement("strong");
    head.textContent = type;
    li.appendChild(head);
    if (data.tool) {
      const code = document.createElement("code");
      code.textContent = " " + data.tool;
      li.appendChild(code);
    }
    const pre = document.createElement("pre");
    let shown = data;
    if (typeof data.output === "string" && /^[[{]/.test(data.output)) {
      try { shown = Object.assign({}, data, { output: JSON.parse(data.output) }); } catch (err) { /* keep the text */ }
    }
    pre.textContent = JSON.stringify(shown, null, 1);
    li.appendChild(pre);
    list.appendChild(li);
    if (type === "complete" && Array.isArray(data.items)) {
      data.items.forEach((id) => {
        const a = document.createElement("a");
        a.href = "/items/" + encodeURIComponent(document.querySelector("h2").dataset.app || "") + "/" + encodeURIComponent(id);
        a.textContent = "review item " + id;
        made.appendChild(a);
      });
    }
  };
  if (list.dataset.finished !== "yes") {
    const source = new EventSource("/runs/" + encodeURIComponent(list.dataset.run) + "/events?after=" + list.dataset.last);
    ["text", "tool", "tool_result", "interrupt", "complete", "error"].forEach((type) => {
      source.addEventListener(type, (e) => show(type, JSON.parse(e.data), e.lastEventId));
    });
    source.addEventListener("end", (e) => {
      source.close();
      status.textContent = JSON.parse(e.data).status;
    });
  }
}
