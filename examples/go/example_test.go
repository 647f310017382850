package shexec_test

import (
	"context"
	"fmt"
	"log"
	"time"

	shexec "github.com/shexec/shexec-go"
)

// Open a session, run a command that prints, moves and exits 3, then wait
// for a background task.
func Example() {
	ctx := context.Background()
	s, err := shexec.New()
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	r, err := s.Run(ctx, "echo hello; cd /tmp; exit 3", shexec.WithTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(r.Stdout)     // hello
	fmt.Println(r.ExitCode) // 3
	fmt.Println(s.Cwd())    // /tmp
	t, err := s.StartTask("sleep 0.2; echo done")
	if err != nil {
		log.Fatal(err)
	}
	defer t.Close()
	tr, err := t.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(tr.Stdout) // done
	// Output:
	// hello
	// 3
	// /tmp
	// done
}
