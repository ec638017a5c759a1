package app

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/healthagents/healthagents/federated"
)

// readFederated reads the FEDERATED_* settings (federated.SettingsFromEnv)
// and the task files FEDERATED_TASK names: one path, or a comma-separated
// list whose first file is the default task and whose others run beside
// it (each with its own id, rounds and privacy budget, under the same
// FEDERATED_* settings). Every error is one line naming the setting; the
// task file's errors name the field too.
func (c *Config) readFederated(getenv func(string) string) error {
	s, err := federated.SettingsFromEnv(getenv)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), federated.ErrConfig.Error()+": "))
	}
	c.Federated = s
	if s.TaskFile == "" {
		return nil
	}
	files := map[string]string{} // task id -> file
	for path := range strings.SplitSeq(s.TaskFile, ",") {
		path = strings.TrimSpace(path)
		if path == "" {
			return fmt.Errorf("FEDERATED_TASK=%q has an empty path in its list (comma-separated task files)", s.TaskFile)
		}
		tf, err := readTaskFile(path)
		if err != nil {
			return err
		}
		if other, dup := files[tf.ID]; dup {
			return fmt.Errorf("FEDERATED_TASK: task id %q is in both %s and %s; every task needs its own id", tf.ID, other, path)
		}
		files[tf.ID] = path
		c.FederatedTasks = append(c.FederatedTasks, tf)
	}
	c.FederatedTask = c.FederatedTasks[0]
	return nil
}

// readTaskFile reads the task file at path (one of FEDERATED_TASK's).
func readTaskFile(path string) (*federated.TaskFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("FEDERATED_TASK=%q cannot be read: %v", path, errors.Unwrap(err))
	}
	defer f.Close()
	tf, err := federated.ParseTaskFile(f)
	if err != nil {
		return nil, fmt.Errorf("FEDERATED_TASK=%q: %s", path, strings.TrimPrefix(err.Error(), federated.ErrTask.Error()+": "))
	}
	return tf, nil
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
