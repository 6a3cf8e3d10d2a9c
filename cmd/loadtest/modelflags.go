package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
	"github.com/lookup/persons/internal/testing/fixtures"
)

// modelFlags defines the flags of the model and of the ids on fs, into mo.
func modelFlags(fs *flag.FlagSet, mo *modelOptions) {
	fs.IntVar(&mo.people, "people", 1000000, "people (consumers) in the model")
	fs.IntVar(&mo.signers, "signers", -1, "authorized signers in the model: five under each of the first --five-signers people, the rest dealt over the other people in turn, at least one each; -1: --people + 4 x --five-signers (1,080,000)")
	fs.IntVar(&mo.five, "five-signers", -1, "people with five signers each, for GET signers with expand at five signers; -1: --people/50 (20,000 of a million), or with --signers as many as it allows, (--signers - --people)/4, if fewer")
	fs.Uint64Var(&mo.seed, "seed", 1, "seed of the model's ids")
	fs.StringVar(&mo.dir, "model-dir", "", "where the model is built once and reused (default: lookupd-loadtest/model-<people>-<signers>-five<five-signers>-<seed> under the user's cache directory)")
	fs.BoolVar(&mo.rebuild, "rebuild", false, "build the model afresh even when a complete one is in --model-dir")
	fs.StringVar(&mo.ids, "ids", fixtures.Uniform, "distribution of the ids read: uniform (every person alike) or zipf (s=1.1, a few people hot)")
	fs.IntVar(&mo.draws, "draws", 1000000, "ids drawn up front for the requests, read in turn from a random start")
}

// checkModel checks the model's flags and sets the default
// --five-signers, --signers and --model-dir. Every person must have a
// signer: lookupd answers GET signers of a person without one 404, and
// the model captures answers of 200 OK only.
func checkModel(mo *modelOptions) error {
	if mo.five == -1 {
		mo.five = mo.people / 50
		if mo.signers >= 0 {
			mo.five = max(0, min(mo.five, (mo.signers-mo.people)/(fixtures.FiveSigners-1)))
		}
	}
	if mo.signers == -1 {
		mo.signers = mo.people + (fixtures.FiveSigners-1)*mo.five
	}
	switch {
	case mo.people < 1:
		return errors.New("--people must be at least 1")
	case mo.five < 0:
		return errors.New("--five-signers must not be negative (-1: the default)")
	case mo.signers < mo.people+(fixtures.FiveSigners-1)*mo.five:
		return fmt.Errorf("--signers %d: a signer for every person and five for each of --five-signers %d take %d (-1: that many)",
			mo.signers, mo.five, mo.people+(fixtures.FiveSigners-1)*mo.five)
	case mo.ids != fixtures.Uniform && mo.ids != fixtures.Zipf:
		return errors.New("--ids: want uniform or zipf")
	case mo.draws < 1:
		return errors.New("--draws must be at least 1")
	}
	if err := mo.shape().Check(); err != nil {
		return fmt.Errorf("--people %d, --signers %d, --five-signers %d: %w", mo.people, mo.signers, mo.five, err)
	}
	if mo.dir == "" {
		mo.dir = loadtest.DefaultModelDir(mo.key())
	}
	return nil
}

// key is the model these options ask for.
func (mo modelOptions) key() loadtest.ModelKey {
	return loadtest.ModelKey{Version: loadtest.ModelVersion, People: mo.people, Signers: mo.signers, Five: mo.five, Seed: mo.seed}
}

// shape is the population these options ask for.
func (mo modelOptions) shape() fixtures.Shape {
	return fixtures.Shape{People: mo.people, Signers: mo.signers, Five: mo.five}
}
