package multiproc

import (
	"errors"
	"fmt"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
)

// raceOutcome is how a racing request ended: "" for success, "status code"
// for an Azure error, the error text otherwise.
func raceOutcome(err error) string {
	var re *azcore.ResponseError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &re):
		return fmt.Sprintf("%d %s", re.StatusCode, re.ErrorCode)
	default:
		return err.Error()
	}
}

// oneWinner checks that exactly one of the racing requests (their
// outcomes) succeeded and every other ended with loser, and returns the
// winner's index.
func oneWinner(t *testing.T, what string, outcomes []string, loser string) int {
	t.Helper()
	winner := -1
	for i, o := range outcomes {
		switch o {
		case "":
			if winner >= 0 {
				t.Fatalf("two of the racing %ss won: %d and %d", what, winner, i)
			}
			winner = i
		case loser:
		default:
			t.Fatalf("%s %d: %s", what, i, o)
		}
	}
	if winner < 0 {
		t.Fatalf("no %s won: %v", what, outcomes)
	}
	return winner
}
