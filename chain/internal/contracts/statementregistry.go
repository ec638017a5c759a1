// Code generated via abigen V2 - DO NOT EDIT.
// This file is a generated binding and any manual changes will be lost.

package contracts

import (
	"bytes"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Reference imports to suppress errors if they are not otherwise used.
var (
	_ = bytes.Equal
	_ = errors.New
	_ = big.NewInt
	_ = common.Big1
	_ = types.BloomLookup
	_ = abi.ConvertType
)

// StatementRegistryMetaData contains all meta data concerning the StatementRegistry contract.
var StatementRegistryMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"}],\"name\":\"NotAContract\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NotOwner\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"kind\",\"type\":\"bytes32\"}],\"name\":\"UnknownKind\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroAddress\",\"type\":\"error\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"previousOwner\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"newOwner\",\"type\":\"address\"}],\"name\":\"OwnershipTransferred\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"kind\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"inputsHash\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"submitter\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256[]\",\"name\":\"inputs\",\"type\":\"uint256[]\"}],\"name\":\"StatementVerified\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"kind\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"verifier\",\"type\":\"address\"}],\"name\":\"VerifierRegistered\",\"type\":\"event\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"kind\",\"type\":\"bytes32\"},{\"internalType\":\"uint256[8]\",\"name\":\"proof\",\"type\":\"uint256[8]\"},{\"internalType\":\"uint256[]\",\"name\":\"inputs\",\"type\":\"uint256[]\"}],\"name\":\"check\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"owner\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"kind\",\"type\":\"bytes32\"},{\"internalType\":\"address\",\"name\":\"verifier\",\"type\":\"address\"}],\"name\":\"register\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"newOwner\",\"type\":\"address\"}],\"name\":\"transferOwnership\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"kind\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"inputsHash\",\"type\":\"bytes32\"}],\"name\":\"verifiedIn\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"blockNumber\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"kind\",\"type\":\"bytes32\"}],\"name\":\"verifierOf\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"verifier\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"kind\",\"type\":\"bytes32\"},{\"internalType\":\"uint256[8]\",\"name\":\"proof\",\"type\":\"uint256[8]\"},{\"internalType\":\"uint256[]\",\"name\":\"inputs\",\"type\":\"uint256[]\"}],\"name\":\"verifyAndRecord\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"}]",
	ID:  "StatementRegistry",
	Bin: "0x6080604052348015600f57600080fd5b50600080546001600160a01b0319163390811782556040519091907f8be0079c531659141344cd1fd0a4f28419497f9722a3daafe3b4186f6b6457e0908290a36106db8061005e6000396000f3fe608060405234801561001057600080fd5b506004361061007d5760003560e01c80638da5cb5b1161005b5780638da5cb5b14610124578063aeedcf0d14610137578063d22057a91461014a578063f2fde38b1461015f57600080fd5b80632916acad146100825780637f9e827d146100c85780638b10964d14610101575b600080fd5b6100ab6100903660046104c2565b6001602052600090815260409020546001600160a01b031681565b6040516001600160a01b0390911681526020015b60405180910390f35b6100f36100d63660046104db565b600260209081526000928352604080842090915290825290205481565b6040519081526020016100bf565b61011461010f3660046104fd565b610172565b60405190151581526020016100bf565b6000546100ab906001600160a01b031681565b6101146101453660046104fd565b610248565b61015d6101583660046105ad565b61035b565b005b61015d61016d3660046105d9565b610415565b600061018085858585610248565b61018c57506000610240565b600083836040516020016101a19291906105fb565b60408051601f1981840301815291815281516020928301206000898152600284528281208282529093529082205490925090036101f557600086815260026020908152604080832084845290915290204390555b336001600160a01b031681877f4472dbad1de3a38d3fa2068308aeed249e2c3d2a65a53f7d08e25d4f46b303d98787604051610232929190610656565b60405180910390a460019150505b949350505050565b6000848152600160205260408120546001600160a01b03168061028657604051636b5214f160e01b8152600481018790526024015b60405180910390fd5b600080826001600160a01b03168787876040516024016102a89392919061066a565b60408051601f198184030181529181526020820180516001600160e01b0316632833f41360e11b179052516102dd9190610693565b600060405180830381855afa9150503d8060008114610318576040519150601f19603f3d011682016040523d82523d6000602084013e61031d565b606091505b5091509150818015610330575080516020145b801561034f57508080602001905181019061034b91906106c2565b6001145b98975050505050505050565b6000546001600160a01b03163314610386576040516330cd747160e01b815260040160405180910390fd5b806001600160a01b03163b6000036103bc576040516322a2d07b60e21b81526001600160a01b038216600482015260240161027d565b60008281526001602052604080822080546001600160a01b0319166001600160a01b0385169081179091559051909184917f844aebaef6b58c1ac9ca20d442e8daac6dcd22a339a70bbed6385ab64882c3b49190a35050565b6000546001600160a01b03163314610440576040516330cd747160e01b815260040160405180910390fd5b6001600160a01b0381166104675760405163d92e233d60e01b815260040160405180910390fd5b600080546040516001600160a01b03808516939216917f8be0079c531659141344cd1fd0a4f28419497f9722a3daafe3b4186f6b6457e091a3600080546001600160a01b0319166001600160a01b0392909216919091179055565b6000602082840312156104d457600080fd5b5035919050565b600080604083850312156104ee57600080fd5b50508035926020909101359150565b600080600080610140858703121561051457600080fd5b8435935061012085018681111561052a57600080fd5b6020860193503567ffffffffffffffff81111561054657600080fd5b8501601f8101871361055757600080fd5b803567ffffffffffffffff81111561056e57600080fd5b8760208260051b840101111561058357600080fd5b949793965060200194505050565b80356001600160a01b03811681146105a857600080fd5b919050565b600080604083850312156105c057600080fd5b823591506105d060208401610591565b90509250929050565b6000602082840312156105eb57600080fd5b6105f482610591565b9392505050565b60006001600160fb1b0383111561061157600080fd5b8260051b80858437919091019392505050565b81835260006001600160fb1b0383111561063d57600080fd5b8260051b80836020870137939093016020019392505050565b602081526000610240602083018486610624565b610100848237610120610100820152600061068a61012083018486610624565b95945050505050565b6000825160005b818110156106b4576020818601810151858301520161069a565b506000920191825250919050565b6000602082840312156106d457600080fd5b505191905056",
}

// StatementRegistry is an auto generated Go binding around an Ethereum contract.
type StatementRegistry struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *StatementRegistry) GetABI() abi.ABI {
	return c.abi
}

// NewStatementRegistry creates a new instance of StatementRegistry.
func NewStatementRegistry() *StatementRegistry {
	parsed, err := StatementRegistryMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &StatementRegistry{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *StatementRegistry) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackCheck is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xaeedcf0d.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function check(bytes32 kind, uint256[8] proof, uint256[] inputs) view returns(bool)
func (statementRegistry *StatementRegistry) PackCheck(kind [32]byte, proof [8]*big.Int, inputs []*big.Int) []byte {
	enc, err := statementRegistry.abi.Pack("check", kind, proof, inputs)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackCheck is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xaeedcf0d.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function check(bytes32 kind, uint256[8] proof, uint256[] inputs) view returns(bool)
func (statementRegistry *StatementRegistry) TryPackCheck(kind [32]byte, proof [8]*big.Int, inputs []*big.Int) ([]byte, error) {
	return statementRegistry.abi.Pack("check", kind, proof, inputs)
}

// UnpackCheck is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xaeedcf0d.
//
// Solidity: function check(bytes32 kind, uint256[8] proof, uint256[] inputs) view returns(bool)
func (statementRegistry *StatementRegistry) UnpackCheck(data []byte) (bool, error) {
	out, err := statementRegistry.abi.Unpack("check", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8da5cb5b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function owner() view returns(address)
func (statementRegistry *StatementRegistry) PackOwner() []byte {
	enc, err := statementRegistry.abi.Pack("owner")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8da5cb5b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function owner() view returns(address)
func (statementRegistry *StatementRegistry) TryPackOwner() ([]byte, error) {
	return statementRegistry.abi.Pack("owner")
}

// UnpackOwner is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x8da5cb5b.
//
// Solidity: function owner() view returns(address)
func (statementRegistry *StatementRegistry) UnpackOwner(data []byte) (common.Address, error) {
	out, err := statementRegistry.abi.Unpack("owner", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackRegister is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd22057a9.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function register(bytes32 kind, address verifier) returns()
func (statementRegistry *StatementRegistry) PackRegister(kind [32]byte, verifier common.Address) []byte {
	enc, err := statementRegistry.abi.Pack("register", kind, verifier)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRegister is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd22057a9.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function register(bytes32 kind, address verifier) returns()
func (statementRegistry *StatementRegistry) TryPackRegister(kind [32]byte, verifier common.Address) ([]byte, error) {
	return statementRegistry.abi.Pack("register", kind, verifier)
}

// PackTransferOwnership is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf2fde38b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function transferOwnership(address newOwner) returns()
func (statementRegistry *StatementRegistry) PackTransferOwnership(newOwner common.Address) []byte {
	enc, err := statementRegistry.abi.Pack("transferOwnership", newOwner)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTransferOwnership is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf2fde38b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function transferOwnership(address newOwner) returns()
func (statementRegistry *StatementRegistry) TryPackTransferOwnership(newOwner common.Address) ([]byte, error) {
	return statementRegistry.abi.Pack("transferOwnership", newOwner)
}

// PackVerifiedIn is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7f9e827d.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function verifiedIn(bytes32 kind, bytes32 inputsHash) view returns(uint256 blockNumber)
func (statementRegistry *StatementRegistry) PackVerifiedIn(kind [32]byte, inputsHash [32]byte) []byte {
	enc, err := statementRegistry.abi.Pack("verifiedIn", kind, inputsHash)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackVerifiedIn is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7f9e827d.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function verifiedIn(bytes32 kind, bytes32 inputsHash) view returns(uint256 blockNumber)
func (statementRegistry *StatementRegistry) TryPackVerifiedIn(kind [32]byte, inputsHash [32]byte) ([]byte, error) {
	return statementRegistry.abi.Pack("verifiedIn", kind, inputsHash)
}

// UnpackVerifiedIn is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x7f9e827d.
//
// Solidity: function verifiedIn(bytes32 kind, bytes32 inputsHash) view returns(uint256 blockNumber)
func (statementRegistry *StatementRegistry) UnpackVerifiedIn(data []byte) (*big.Int, error) {
	out, err := statementRegistry.abi.Unpack("verifiedIn", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackVerifierOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x2916acad.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function verifierOf(bytes32 kind) view returns(address verifier)
func (statementRegistry *StatementRegistry) PackVerifierOf(kind [32]byte) []byte {
	enc, err := statementRegistry.abi.Pack("verifierOf", kind)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackVerifierOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x2916acad.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function verifierOf(bytes32 kind) view returns(address verifier)
func (statementRegistry *StatementRegistry) TryPackVerifierOf(kind [32]byte) ([]byte, error) {
	return statementRegistry.abi.Pack("verifierOf", kind)
}

// UnpackVerifierOf is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x2916acad.
//
// Solidity: function verifierOf(bytes32 kind) view returns(address verifier)
func (statementRegistry *StatementRegistry) UnpackVerifierOf(data []byte) (common.Address, error) {
	out, err := statementRegistry.abi.Unpack("verifierOf", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackVerifyAndRecord is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8b10964d.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function verifyAndRecord(bytes32 kind, uint256[8] proof, uint256[] inputs) returns(bool)
func (statementRegistry *StatementRegistry) PackVerifyAndRecord(kind [32]byte, proof [8]*big.Int, inputs []*big.Int) []byte {
	enc, err := statementRegistry.abi.Pack("verifyAndRecord", kind, proof, inputs)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackVerifyAndRecord is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8b10964d.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function verifyAndRecord(bytes32 kind, uint256[8] proof, uint256[] inputs) returns(bool)
func (statementRegistry *StatementRegistry) TryPackVerifyAndRecord(kind [32]byte, proof [8]*big.Int, inputs []*big.Int) ([]byte, error) {
	return statementRegistry.abi.Pack("verifyAndRecord", kind, proof, inputs)
}

// UnpackVerifyAndRecord is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x8b10964d.
//
// Solidity: function verifyAndRecord(bytes32 kind, uint256[8] proof, uint256[] inputs) returns(bool)
func (statementRegistry *StatementRegistry) UnpackVerifyAndRecord(data []byte) (bool, error) {
	out, err := statementRegistry.abi.Unpack("verifyAndRecord", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// StatementRegistryOwnershipTransferred represents a OwnershipTransferred event raised by the StatementRegistry contract.
type StatementRegistryOwnershipTransferred struct {
	PreviousOwner common.Address
	NewOwner      common.Address
	Raw           *types.Log // Blockchain specific contextual infos
}

const StatementRegistryOwnershipTransferredEventName = "OwnershipTransferred"

// ContractEventName returns the user-defined event name.
func (StatementRegistryOwnershipTransferred) ContractEventName() string {
	return StatementRegistryOwnershipTransferredEventName
}

// UnpackOwnershipTransferredEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event OwnershipTransferred(address indexed previousOwner, address indexed newOwner)
func (statementRegistry *StatementRegistry) UnpackOwnershipTransferredEvent(log *types.Log) (*StatementRegistryOwnershipTransferred, error) {
	event := "OwnershipTransferred"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != statementRegistry.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(StatementRegistryOwnershipTransferred)
	if len(log.Data) > 0 {
		if err := statementRegistry.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range statementRegistry.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// StatementRegistryStatementVerified represents a StatementVerified event raised by the StatementRegistry contract.
type StatementRegistryStatementVerified struct {
	Kind       [32]byte
	InputsHash [32]byte
	Submitter  common.Address
	Inputs     []*big.Int
	Raw        *types.Log // Blockchain specific contextual infos
}

const StatementRegistryStatementVerifiedEventName = "StatementVerified"

// ContractEventName returns the user-defined event name.
func (StatementRegistryStatementVerified) ContractEventName() string {
	return StatementRegistryStatementVerifiedEventName
}

// UnpackStatementVerifiedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event StatementVerified(bytes32 indexed kind, bytes32 indexed inputsHash, address indexed submitter, uint256[] inputs)
func (statementRegistry *StatementRegistry) UnpackStatementVerifiedEvent(log *types.Log) (*StatementRegistryStatementVerified, error) {
	event := "StatementVerified"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != statementRegistry.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(StatementRegistryStatementVerified)
	if len(log.Data) > 0 {
		if err := statementRegistry.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range statementRegistry.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// StatementRegistryVerifierRegistered represents a VerifierRegistered event raised by the StatementRegistry contract.
type StatementRegistryVerifierRegistered struct {
	Kind     [32]byte
	Verifier common.Address
	Raw      *types.Log // Blockchain specific contextual infos
}

const StatementRegistryVerifierRegisteredEventName = "VerifierRegistered"

// ContractEventName returns the user-defined event name.
func (StatementRegistryVerifierRegistered) ContractEventName() string {
	return StatementRegistryVerifierRegisteredEventName
}

// UnpackVerifierRegisteredEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event VerifierRegistered(bytes32 indexed kind, address indexed verifier)
func (statementRegistry *StatementRegistry) UnpackVerifierRegisteredEvent(log *types.Log) (*StatementRegistryVerifierRegistered, error) {
	event := "VerifierRegistered"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != statementRegistry.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(StatementRegistryVerifierRegistered)
	if len(log.Data) > 0 {
		if err := statementRegistry.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range statementRegistry.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// UnpackError attempts to decode the provided error data using user-defined
// error definitions.
func (statementRegistry *StatementRegistry) UnpackError(raw []byte) (any, error) {
	if bytes.Equal(raw[:4], statementRegistry.abi.Errors["NotAContract"].ID.Bytes()[:4]) {
		return statementRegistry.UnpackNotAContractError(raw[4:])
	}
	if bytes.Equal(raw[:4], statementRegistry.abi.Errors["NotOwner"].ID.Bytes()[:4]) {
		return statementRegistry.UnpackNotOwnerError(raw[4:])
	}
	if bytes.Equal(raw[:4], statementRegistry.abi.Errors["UnknownKind"].ID.Bytes()[:4]) {
		return statementRegistry.UnpackUnknownKindError(raw[4:])
	}
	if bytes.Equal(raw[:4], statementRegistry.abi.Errors["ZeroAddress"].ID.Bytes()[:4]) {
		return statementRegistry.UnpackZeroAddressError(raw[4:])
	}
	return nil, errors.New("Unknown error")
}

// StatementRegistryNotAContract represents a NotAContract error raised by the StatementRegistry contract.
type StatementRegistryNotAContract struct {
	Account common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotAContract(address account)
func StatementRegistryNotAContractErrorID() common.Hash {
	return common.HexToHash("0x8a8b41ec6b8382733436ac0321a506b0d1e41dc29c8650d1fd1ff17e726ab809")
}

// UnpackNotAContractError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotAContract(address account)
func (statementRegistry *StatementRegistry) UnpackNotAContractError(raw []byte) (*StatementRegistryNotAContract, error) {
	out := new(StatementRegistryNotAContract)
	if err := statementRegistry.abi.UnpackIntoInterface(out, "NotAContract", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// StatementRegistryNotOwner represents a NotOwner error raised by the StatementRegistry contract.
type StatementRegistryNotOwner struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotOwner()
func StatementRegistryNotOwnerErrorID() common.Hash {
	return common.HexToHash("0x30cd74712f59d478562d48e2d35de830db72c60a63dd08ae59199eec990b5bc4")
}

// UnpackNotOwnerError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotOwner()
func (statementRegistry *StatementRegistry) UnpackNotOwnerError(raw []byte) (*StatementRegistryNotOwner, error) {
	out := new(StatementRegistryNotOwner)
	if err := statementRegistry.abi.UnpackIntoInterface(out, "NotOwner", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// StatementRegistryUnknownKind represents a UnknownKind error raised by the StatementRegistry contract.
type StatementRegistryUnknownKind struct {
	Kind [32]byte
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error UnknownKind(bytes32 kind)
func StatementRegistryUnknownKindErrorID() common.Hash {
	return common.HexToHash("0x6b5214f14505c514869b41de392441814476e5804afc13a72077c8e7d17062c9")
}

// UnpackUnknownKindError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error UnknownKind(bytes32 kind)
func (statementRegistry *StatementRegistry) UnpackUnknownKindError(raw []byte) (*StatementRegistryUnknownKind, error) {
	out := new(StatementRegistryUnknownKind)
	if err := statementRegistry.abi.UnpackIntoInterface(out, "UnknownKind", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// StatementRegistryZeroAddress represents a ZeroAddress error raised by the StatementRegistry contract.
type StatementRegistryZeroAddress struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ZeroAddress()
func StatementRegistryZeroAddressErrorID() common.Hash {
	return common.HexToHash("0xd92e233df2717d4a40030e20904abd27b68fcbeede117eaaccbbdac9618c8c73")
}

// UnpackZeroAddressError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ZeroAddress()
func (statementRegistry *StatementRegistry) UnpackZeroAddressError(raw []byte) (*StatementRegistryZeroAddress, error) {
	out := new(StatementRegistryZeroAddress)
	if err := statementRegistry.abi.UnpackIntoInterface(out, "ZeroAddress", raw); err != nil {
		return nil, err
	}
	return out, nil
}
