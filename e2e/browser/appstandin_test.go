package browser

// standInView is a tiny view of the test's own, used until the server has its ui://
// resource: it speaks the view's side of the protocol and shows what the text answer says.
// TEMPORARY: deleted once the server's view exists.
const standInView = `<!doctype html><html><head><meta charset="utf-8"><style>
body{margin:0;font:15px system-ui;background:var(--color-background-primary,#fff);color:var(--color-text-primary,#111)}
#d{max-height:380px;overflow:auto}button{min-height:44px;min-width:44px}</style></head><body>
<h1 id="t"></h1><div id="d"></div><p id="a"></p><button id="open">Open on your page</button><button id="undo">Undo this change</button>
<script>
let n=0;const wait={};
function req(method,params){const id=++n;parent.postMessage({jsonrpc:"2.0",id,method,params},"*");return new Promise(r=>wait[id]=r)}
function note(method,params){parent.postMessage({jsonrpc:"2.0",method,params},"*")}
let link="";
addEventListener("message",e=>{const m=e.data;if(m.id&&wait[m.id]){wait[m.id](m.result||m.error);delete wait[m.id];return}
 if(m.method==="ui/notifications/tool-input"){const a=m.params.arguments||{};for(const l of [a.old,a.new,...(a.text||"").split("\n")].filter(x=>x!==undefined)){const p=document.createElement("pre");p.textContent="+ "+l;d.appendChild(p)}}
 if(m.method==="ui/notifications/tool-result"){const txt=(m.params.content||[]).map(c=>c.text).join("\n");const mm=/\[([^\]]*)\]\(([^)]*)\)/.exec(txt);t.textContent=txt;link=mm?mm[2]:"";size()}
});
function size(){note("ui/notifications/size-changed",{width:document.documentElement.scrollWidth,height:document.documentElement.scrollHeight})}
open.onclick=()=>req("ui/open-link",{url:link});
undo.onclick=async()=>{const r=await req("tools/call",{name:"undo_change",arguments:{}});a.textContent=JSON.stringify(r)};
req("ui/initialize",{appInfo:{name:"stand-in",version:"0"},appCapabilities:{},protocolVersion:"2026-01-26"}).then(r=>{document.documentElement.dataset.theme=r.hostContext.theme;const v=r.hostContext.styles&&r.hostContext.styles.variables||{};for(const k in v)document.documentElement.style.setProperty(k,v[k]);note("ui/notifications/initialized",{})});
</script></body></html>`
