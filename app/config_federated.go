package app

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/healthagents/healthagents/federated"
)

// readFederated reads the FEDERATED_* settings (federated.SettingsFromEnv)
// and the task file FEDERATED_TASK names. Every error is one line naming the
// setting; the task file's errors name the field too.
func (c *Config) readFederated(getenv func(string) string) error {
	s, err := federated.SettingsFromEnv(getenv)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), federated.ErrConfig.Error()+": "))
	}
	c.Federated = s
	if s.TaskFile == "" {
		return nil
	}
	f, err := os.Open(s.TaskFile)
	if err != nil {
		return fmt.Errorf("FEDERATED_TASK=%q cannot be read: %v", s.TaskFile, errors.Unwrap(err))
	}
	defer f.Close()
	tf, err := federated.ParseTaskFile(f)
	if err != nil {
		return fmt.Errorf("FEDERATED_TASK=%q: %s", s.TaskFile, strings.TrimPrefix(err.Error(), federated.ErrTask.Error()+": "))
	}
	c.FederatedTask = tf
	return nil
}

// federatedConfig is the coordinator configuration of the settings: the
// task file's task (the built-in diagnosis task without FEDERATED_TASK)
// with the FEDERATED_* run settings.
func (c Config) federatedConfig() federated.Config {
	task := federated.DefaultTask()
	if c.FederatedTask != nil {
		task = c.FederatedTask.Task()
	}
	return c.Federated.Config(task)
}
