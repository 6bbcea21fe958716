package docstore

import "github.com/compass-mcp/compass-mcp/spaces"

// Show gives who saved a version as people read it: "Ana", "north for Ana", or, for an
// accepted proposal, "north for Ana, accepted by Ana".
func (a Author) Show(names spaces.Names) string {
	who := names.ShowString(a.By)
	if a.For != "" {
		who += " for " + names.ShowString(a.For)
	}
	if a.Accepted != "" {
		who += ", accepted by " + names.ShowString(a.Accepted)
	}
	return who
}
