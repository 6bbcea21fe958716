package linediff_test

import (
	"fmt"

	"github.com/compass-mcp/compass-mcp/linediff"
)

func ExampleMerge3() {
	base := "# Groceries\n\n- eggs\n- milk\n- bread\n"
	theirs := "# Groceries\n\n- eggs\n- oat milk\n- bread\n"
	mine := "# Groceries\n\n- eggs\n- milk\n- bread\n- jam\n"

	merged, _ := linediff.Merge3(base, theirs, mine)
	fmt.Print(merged)

	// Changing the line next to one the other side changed is a conflict.
	mine = "# Groceries\n\n- eggs\n- milk\n- rye bread\n"
	_, conflicts := linediff.Merge3(base, theirs, mine)
	for _, c := range conflicts {
		fmt.Printf("line %d: base %q, theirs %q, mine %q\n", c.BaseStart, c.Base, c.Theirs, c.Mine)
	}
	// Output:
	// # Groceries
	//
	// - eggs
	// - oat milk
	// - bread
	// - jam
	// line 4: base ["- milk" "- bread"], theirs ["- oat milk" "- bread"], mine ["- milk" "- rye bread"]
}
